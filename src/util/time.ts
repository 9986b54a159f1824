/**
 * Timestamps for status texts: RFC 3339 to the second with a numeric offset, always
 * `±hh:mm` (never `Z`), in the local time zone.
 */

function pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

function offset(d: Date): string {
  const off = -d.getTimezoneOffset();
  const sign = off >= 0 ? '+' : '-';
  const a = Math.abs(off);
  return `${sign}${pad(Math.floor(a / 60))}:${pad(a % 60)}`;
}

/** Local date and time to the second, without the zone: `2026-11-21T22:37:33`. */
function localSeconds(d: Date): string {
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}` +
    `T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
  );
}

/**
 * Status timestamps as Blip writes them (Go's RFC 3339 layout): local time to the second,
 * `Z` when the offset is zero, else the numeric offset: `2026-11-21T22:37:33Z`,
 * `2026-11-21T23:37:33+01:00`.
 */
export function formatTimestamp(d: Date): string {
  const off = offset(d);
  return `${localSeconds(d)}${off === '+00:00' ? 'Z' : off}`;
}

/** RFC 3339 with milliseconds, numeric offset: `2026-11-21T22:37:33.123+00:00`. */
export function formatTimestampMs(d: Date): string {
  return `${localSeconds(d)}.${pad(d.getMilliseconds(), 3)}${offset(d)}`;
}

/**
 * Go's RFC3339Nano as the log sink prints `begin`: up to 9 fractional
 * digits, trailing zeros removed, `Z` in UTC. JavaScript dates carry milliseconds.
 */
export function formatRfc3339Nano(d: Date): string {
  const ms = d.getMilliseconds();
  const fracText = ms === 0 ? '' : `.${pad(ms, 3).replace(/0+$/, '')}`;
  const off = offset(d);
  const zone = off === '+00:00' ? 'Z' : off;
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}` +
    `T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}${fracText}${zone}`
  );
}

/** Event/log line time: `YYYY/MM/DD HH:MM:SS.uuuuuu` local time. */
export function formatEventTime(d: Date): string {
  return (
    `${d.getFullYear()}/${pad(d.getMonth() + 1)}/${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}000`
  );
}
