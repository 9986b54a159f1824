import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { constants as zlibConstants, gunzipSync, gzipSync } from 'node:zlib';
import { GZIP_CHUNK_BYTES, gzipPayload } from './gzip.js';

/** Text that compresses about as an exposition does, `n` bytes long. */
function exposition(n: number): Buffer {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < n; i++) {
    const line = `# HELP mysql_global_status_x${i % 97} Generic metric.\nmysql_global_status_x${i % 97} ${(i * 7919) % 100003}\n`;
    lines.push(line);
    size += line.length;
  }
  return Buffer.from(lines.join('').slice(0, n));
}

describe('gzipPayload', () => {
  it('uses an output chunk small enough for Node to take it from its shared buffer pool', () => {
    assert.ok(GZIP_CHUNK_BYTES < Buffer.poolSize / 2, `${GZIP_CHUNK_BYTES} >= ${Buffer.poolSize / 2}`);
  });

  it('gives back the input, for bodies from empty to many output chunks long', () => {
    for (const n of [0, 1, 100, GZIP_CHUNK_BYTES, 20_000, 200_000]) {
      const body = exposition(n);
      const zipped = gzipPayload(body, zlibConstants.Z_BEST_SPEED);
      assert.deepEqual(gunzipSync(zipped), body, `${n} bytes`);
      if (n === 200_000)
        assert.ok(zipped.length > 4 * GZIP_CHUNK_BYTES, `${zipped.length} bytes: more than one chunk`);
    }
  });

  it('makes the same bytes as Node’s gzipSync at the same level, for text and strings', () => {
    const body = exposition(186_000);
    for (const level of [zlibConstants.Z_BEST_SPEED, zlibConstants.Z_DEFAULT_COMPRESSION, 9]) {
      assert.deepEqual(gzipPayload(body, level), gzipSync(body, { level }), `level ${level}`);
    }
    const json = JSON.stringify({ series: [{ metric: 'mysql.status.threads_running', points: [[1, 2]] }] });
    assert.deepEqual(gzipPayload(json), gzipSync(json));
  });

  it('compresses at zlib’s default level when no level is given', () => {
    const body = exposition(50_000);
    assert.deepEqual(gzipPayload(body), gzipSync(body, { level: zlibConstants.Z_DEFAULT_COMPRESSION }));
    assert.notDeepEqual(gzipPayload(body), gzipSync(body, { level: zlibConstants.Z_BEST_SPEED }));
  });
});
