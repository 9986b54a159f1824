/**
 * The `crypto` that mysql2's login code gets in the bundle (scripts/build-bundle.mjs makes
 * mysql2's `lib/auth_41.js` require this file instead of Node's `crypto`).
 *
 * mysql2 answers a `mysql_native_password` login, the usual one on MariaDB, with three SHA-1
 * hashes of the password and the server's scramble, and requires Node's `crypto` for them
 * when it loads. Loading Node's `crypto` initialises OpenSSL: about 2.4 MiB of memory and
 * some tens of milliseconds of every start, for 60 bytes hashed per connection. Here SHA-1
 * comes from @noble/hashes (audited, pure JavaScript); any other algorithm goes to Node's
 * `crypto`, loaded at that first call. The digests are the same bytes
 * (driver-crypto.test.ts compares them with Node's).
 */
import { sha1 } from '@noble/hashes/legacy.js';

/** The part of Node's `Hash` that mysql2 uses. */
export interface DriverHash {
  /** Text is hashed as UTF-8, as Node's `Hash.update` does without an encoding. */
  update(data: string | Uint8Array): DriverHash;
  digest(): Buffer;
}

/** Node's `createHash(algorithm)` for the algorithms mysql2's login code asks for. */
export function createHash(algorithm: string): DriverHash {
  if (algorithm !== 'sha1') return process.getBuiltinModule('node:crypto').createHash(algorithm);
  const hash = sha1.create();
  const driverHash: DriverHash = {
    update(data) {
      hash.update(typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
      return driverHash;
    },
    digest() {
      const bytes = hash.digest();
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
  };
  return driverHash;
}
