import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatEventTime, formatRfc3339Nano, formatTimestamp, formatTimestampMs } from './time.js';

// These tests run with TZ=UTC (set by scripts/test.sh); they check the exact text shapes.
const d = new Date(Date.UTC(2026, 10, 21, 22, 37, 33, 120));
const utc = new Date().getTimezoneOffset() === 0;

describe('timestamps', () => {
  it(
    'status timestamps are Go RFC 3339 as in Blip: Z in UTC; sink texts keep a numeric offset',
    { skip: !utc },
    () => {
      assert.equal(formatTimestamp(d), '2026-11-21T22:37:33Z');
      assert.equal(formatTimestampMs(d), '2026-11-21T22:37:33.120+00:00');
    },
  );
  it('status timestamps outside UTC carry the numeric offset, as Go prints them', () => {
    const before = process.env.TZ;
    process.env.TZ = 'Europe/Paris';
    try {
      assert.equal(formatTimestamp(d), '2026-11-21T23:37:33+01:00');
    } finally {
      if (before === undefined) delete process.env.TZ;
      else process.env.TZ = before;
    }
  });
  it('log sink begin is RFC 3339 nano with trailing zeros removed and Z in UTC', { skip: !utc }, () => {
    assert.equal(formatRfc3339Nano(d), '2026-11-21T22:37:33.12Z');
    assert.equal(formatRfc3339Nano(new Date(Date.UTC(2026, 0, 1))), '2026-01-01T00:00:00Z');
  });
  it('event times have microseconds', { skip: !utc }, () => {
    assert.equal(formatEventTime(d), '2026/11/21 22:37:33.120000');
  });
  it('always matches the RFC 3339 shape in any zone', () => {
    assert.match(formatTimestamp(new Date()), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)$/);
  });
});
