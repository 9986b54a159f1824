import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { constants as zlibConstants, gunzipSync, gzipSync, inflateRawSync } from 'node:zlib';
import { GZIP_CHUNK_BYTES, SegmentedGzip, gzipPayload, type TextSegments } from './gzip.js';

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

describe('SegmentedGzip', () => {
  /** `text` cut every `size` bytes (at line ends), with the given versions. */
  const cut = (text: Buffer, size: number, versions: (i: number) => number): TextSegments => {
    const bounds = [0];
    for (let at = text.indexOf(10, size); at >= 0 && at + 1 < text.length; at = text.indexOf(10, at + size))
      bounds.push(at + 1);
    bounds.push(text.length);
    return { bounds, versions: bounds.slice(1).map((_b, i) => versions(i)) };
  };
  /** GNU gzip's decoder, another implementation than the zlib that made the bytes. */
  const gnuGunzip = (zipped: Buffer): Buffer => execFileSync('gzip', ['-dc'], { input: zipped });

  it('makes one gzip member that zlib and GNU gzip read back', () => {
    const gz = new SegmentedGzip(zlibConstants.Z_BEST_SPEED);
    const text = exposition(200_000);
    const plain = gz.gzip(
      text,
      cut(text, 32_768, (i) => i + 1),
    );
    assert.deepEqual(gunzipSync(plain), text);
    assert.deepEqual(gnuGunzip(plain), text);
    assert.deepEqual(plain.subarray(0, 10), gzipSync(text, { level: 1 }).subarray(0, 10), 'the same header');
    // Segments cost a little compression, not much.
    const one = gzipSync(text, { level: 1 }).length;
    assert.ok(plain.length < one * 1.15, `${plain.length} bytes against ${one} in one piece`);
  });

  it('reads back right as segments change, grow, shrink, come and go', () => {
    const gz = new SegmentedGzip(zlibConstants.Z_BEST_SPEED);
    let version = 0;
    let text = exposition(100_000);
    let versions = cut(text, 16_384, () => ++version).versions.slice();
    for (let step = 0; step < 40; step++) {
      // Change one segment's bytes (its version with them), or the whole text and its cut.
      if (step % 10 === 9) {
        text = exposition(60_000 + step * 3_000);
        versions = cut(text, 16_384, () => ++version).versions.slice();
      } else {
        const { bounds } = cut(text, 16_384, () => 0);
        const i = step % (bounds.length - 1);
        const at = bounds[i] ?? 0;
        const insert = Buffer.from(`changed_${step} ${step}\n`);
        text = Buffer.concat([text.subarray(0, at), insert, text.subarray(at)]);
        // Inserting moves later cut points: recut, keeping the versions of segments before i.
        const recut = cut(text, 16_384, (j) => (j < i ? (versions[j] ?? ++version) : ++version));
        versions = recut.versions.slice();
      }
      const segments = cut(text, 16_384, (j) => versions[j] ?? 0);
      assert.deepEqual(gunzipSync(gz.gzip(text, segments)), text, `step ${step}`);
    }
    assert.deepEqual(gnuGunzip(gz.gzip(Buffer.alloc(0), { bounds: [0], versions: [] })), Buffer.alloc(0));
  });

  it('compresses again only the segments whose version changed', () => {
    const gz = new SegmentedGzip(zlibConstants.Z_BEST_SPEED);
    const text = exposition(100_000);
    const segments = cut(text, 16_384, (i) => i + 1);
    assert.deepEqual(gunzipSync(gz.gzip(text, segments)), text);
    // Same versions over different bytes: the old segments' bytes come back, so they were kept
    // (the deflate data read without the trailer, whose CRC-32 is the new text's).
    const inflate = (zipped: Buffer): Buffer => inflateRawSync(zipped.subarray(10, -8));
    const other = Buffer.from(text.toString().replace(/mysql/g, 'MYSQL'));
    assert.equal(other.length, text.length);
    const stale = inflate(gz.gzip(other, segments));
    assert.deepEqual(stale, text);
    // A new version for the first segment only: it alone is compressed from the new bytes.
    const first = { bounds: segments.bounds, versions: [100, ...segments.versions.slice(1)] };
    const mixed = inflate(gz.gzip(other, first));
    const end = segments.bounds[1] ?? 0;
    assert.deepEqual(mixed.subarray(0, end), other.subarray(0, end));
    assert.deepEqual(mixed.subarray(end), text.subarray(end));
  });

  it('finds a segment it compressed by its version when the segments before it change', () => {
    const gz = new SegmentedGzip(zlibConstants.Z_BEST_SPEED);
    const text = exposition(50_000);
    const segments = cut(text, 16_384, (i) => i + 1);
    gz.gzip(text, segments);
    // A new segment before them, and other bytes under the old versions: the old segments'
    // bytes come back, found by version at their new places.
    const head = Buffer.from('# a new first segment\nnew 1\n');
    const other = Buffer.from(text.toString().replace(/mysql/g, 'MYSQL'));
    const moved = {
      bounds: [0, ...segments.bounds.map((b) => b + head.length)],
      versions: [99, ...segments.versions],
    };
    const zipped = gz.gzip(Buffer.concat([head, other]), moved);
    assert.deepEqual(inflateRawSync(zipped.subarray(10, -8)), Buffer.concat([head, text]));
  });

  it('sends stored segments as they are, between compressed ones, for zlib and GNU gzip alike', () => {
    const gz = new SegmentedGzip(zlibConstants.Z_BEST_SPEED);
    let text = exposition(150_000);
    for (let step = 0; step < 4; step++) {
      // Every other segment stored, one of them longer than a stored block holds (65,535 bytes).
      const segments = cut(text, step === 2 ? 70_000 : 8_192, (i) => step * 1000 + i);
      const stored = segments.versions.map((_v, i) => i % 2 === step % 2);
      const zipped = gz.gzip(text, { ...segments, stored });
      assert.deepEqual(gunzipSync(zipped), text, `step ${step}`);
      assert.deepEqual(gnuGunzip(zipped), text, `step ${step}`);
      const storedBytes = stored.reduce(
        (sum, s, i) => sum + (s ? (segments.bounds[i + 1] ?? 0) - (segments.bounds[i] ?? 0) : 0),
        0,
      );
      assert.ok(zipped.length > storedBytes, `${zipped.length} bytes hold ${storedBytes} stored ones`);
      text = Buffer.concat([
        text.subarray(0, 10_000),
        Buffer.from(`changed ${step}\n`),
        text.subarray(10_000),
      ]);
    }
    const empty = { bounds: [0, 0], versions: [1], stored: [true] };
    assert.deepEqual(gnuGunzip(gz.gzip(Buffer.alloc(0), empty)), Buffer.alloc(0));
  });
});
