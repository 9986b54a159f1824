/**
 * formatNumber() against Go itself: push values to a real Prometheus Pushgateway (a Go
 * program that re-exposes them with client_golang's expfmt) and compare its text with
 * sonde's, value by value, for thousands of doubles spread over every exponent.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatNumber } from '../../src/prom/exposition.js';
import { httpGet, httpRequest, parseExposition } from './exporter-peers.js';
import { startPushgateway, type Pushgateway } from '../helpers/pushgateway.js';

let gw: Pushgateway;

/** Deterministic doubles: edge cases, decimal boundaries, and random float64 bit patterns. */
function values(): number[] {
  const out = [
    0,
    1,
    -1,
    2,
    0.5,
    999999,
    1e6,
    1000001,
    123456.7,
    999999.9,
    1234567.8,
    0.0001,
    0.00001,
    0.00012345,
    1e-7,
    5e-324,
    2.2250738585072014e-308,
    1.7976931348623157e308,
    2 ** 53,
    2 ** 64,
    2 ** 63,
    4931584,
    1e21,
    1e-5 * 9.99,
    0.1 + 0.2,
  ];
  for (let x = -30; x <= 30; x++) out.push(Number(`1e${x}`), Number(`-7.25e${x}`), Number(`9.999999e${x}`));
  let s = 0x2545f4914f6cdd1dn;
  const view = new DataView(new ArrayBuffer(8));
  while (out.length < 4000) {
    s ^= (s << 13n) & 0xffffffffffffffffn;
    s ^= s >> 7n;
    s ^= (s << 17n) & 0xffffffffffffffffn;
    view.setBigUint64(0, s);
    const v = view.getFloat64(0);
    if (Number.isFinite(v)) out.push(v);
    // also "everyday" magnitudes: integers and short decimals as MySQL reports them
    out.push(Number(s % 100000000000n) / [1, 10, 1000, 1e6][Number(s % 4n)]!);
  }
  return out;
}

describe('formatNumber against Go (Pushgateway re-exposition)', { timeout: 60_000 }, () => {
  before(async () => {
    gw = await startPushgateway();
  });
  after(async () => {
    await gw?.stop();
  });

  it('prints every value exactly as Go client_golang does', async () => {
    const vals = values();
    // Push with round-trip-exact JS text (Go parses it back to the same float64).
    const body = [
      '# TYPE sonde_fmt gauge',
      ...vals.map((v, i) => `sonde_fmt{i="${i}"} ${String(v)}`),
      '',
    ].join('\n');
    const put = await httpRequest('PUT', `${gw.base}/metrics/job/fmt`, body, {
      'Content-Type': 'text/plain; version=0.0.4',
    });
    assert.ok(put.status === 200 || put.status === 202, `push: ${put.status} ${put.body}`);
    const fams = parseExposition((await httpGet(`${gw.base}/metrics`)).body);
    const series = fams.get('sonde_fmt')?.series;
    assert.ok(series !== undefined);
    const diffs: string[] = [];
    vals.forEach((v, i) => {
      const go = series.get(`{i="${i}",instance="",job="fmt"}`);
      if (go === undefined) diffs.push(`${i}: missing`);
      else if (go !== formatNumber(v)) diffs.push(`${String(v)}: Go ${go}, sonde ${formatNumber(v)}`);
    });
    assert.deepEqual(diffs.slice(0, 20), []);
    assert.equal(series.size, vals.length);
    assert.ok(vals.length >= 4000);
  });
});
