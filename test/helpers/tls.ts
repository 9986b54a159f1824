/**
 * Throwaway TLS material for tests: a CA and a server certificate for 127.0.0.1/localhost
 * signed by it, made with the openssl command line.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TlsFiles {
  dir: string;
  ca: string;
  cert: string;
  key: string;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'pipe' });
}

/** `names`: the server certificate's subjectAltName entries. */
export function makeTlsFiles(names: string[] = ['IP:127.0.0.1', 'DNS:localhost']): TlsFiles {
  const dir = mkdtempSync(join(tmpdir(), 'sonde-tls-'));
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=sonde test CA',
      '-keyout',
      'ca-key.pem',
      '-out',
      'ca.pem',
    ],
    dir,
  );
  openssl(
    [
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=localhost',
      '-keyout',
      'server-key.pem',
      '-out',
      'server.csr',
    ],
    dir,
  );
  writeFileSync(join(dir, 'ext.cnf'), `subjectAltName=${names.join(',')}\n`);
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca-key.pem',
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      'ext.cnf',
      '-out',
      'server.pem',
    ],
    dir,
  );
  return { dir, ca: join(dir, 'ca.pem'), cert: join(dir, 'server.pem'), key: join(dir, 'server-key.pem') };
}

/**
 * A client certificate in `files.dir` named `<name>.pem`/`<name>-key.pem`, with
 * subjectAltName `names`. Signed by the CA of `files`, or self-signed with `selfSigned`.
 */
export function makeClientCert(
  files: TlsFiles,
  name: string,
  names: string[],
  opts: { selfSigned?: boolean } = {},
): { cert: string; key: string } {
  const { dir } = files;
  const ext = `${name}-ext.cnf`;
  writeFileSync(join(dir, ext), `subjectAltName=${names.join(',')}\nextendedKeyUsage=clientAuth\n`);
  const key = `${name}-key.pem`;
  const cert = `${name}.pem`;
  openssl(
    ['req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${name}`, '-keyout', key, '-out', `${name}.csr`],
    dir,
  );
  const signer =
    opts.selfSigned === true
      ? ['-signkey', key]
      : ['-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial'];
  openssl(
    ['x509', '-req', '-in', `${name}.csr`, ...signer, '-days', '2', '-extfile', ext, '-out', cert],
    dir,
  );
  return { cert: join(dir, cert), key: join(dir, key) };
}
