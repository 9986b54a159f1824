import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatEventTime, formatRfc3339Nano, formatTimestamp, formatTimestampMs } from './time.js';

// These tests run with TZ=UTC (set by scripts/test.sh); they check the exact text shapes.
const d = new Date(Date.UTC(2026, 10, 21, 22, 37, 33, 120));
const utc = new Date().getTimezoneOffset() === 0;

describe('timestamps', () => {
  it('status timestamps have a numeric offset, never Z', { skip: !utc }, () => {
    assert.equal(formatTimestamp(d), '2026-11-21T22:37:33+00:00');
    assert.equal(formatTimestampMs(d), '2026-11-21T22:37:33.120+00:00');
  });
  it('log sink begin is RFC 3339 nano with trailing zeros removed and Z in UTC', { skip: !utc }, () => {
    assert.equal(formatRfc3339Nano(d), '2026-11-21T22:37:33.12Z');
    assert.equal(formatRfc3339Nano(new Date(Date.UTC(2026, 0, 1))), '2026-01-01T00:00:00Z');
  });
  it('event times have microseconds', { skip: !utc }, () => {
    assert.equal(formatEventTime(d), '2026/11/21 22:37:33.120000');
  });
  it('always matches the RFC 3339 shape in any zone', () => {
    assert.match(formatTimestamp(new Date()), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);
  });
});
