/**
 * The Queries tab's memory of one monitor: the records of the query analytics domains,
 * kept for the page (the sinks get them too). Bounded: top-query entries of the last hour
 * (at most 20000), the last 5 samples of at most 500 digests, the current plan of at most
 * 500 digests, and the lock waits of the last lock.wait collection. Records arrive already
 * obfuscated (the domains' `query-text` option decides); nothing here reads the server.
 */
import type { Metrics } from '../core/metrics.js';
import type { LogRecord, Records } from '../core/records.js';
import type { UiLockWait, UiPlan, UiQueries, UiSample, UiTopQuery } from '../core/ui.js';

const HOUR_MS = 3_600_000;
const MAX_TOP = 20_000;
const MAX_DIGESTS = 500;
const SAMPLES_PER_DIGEST = 5;
const D = 'mysql.events_statements_summary_by_digest.';
const C = 'mysql.events_statements_current.';

interface TopEntry {
  time: number;
  digest: string;
  schema: string | null;
  text: string | null;
  calls: number;
  seconds: number;
  examined: number;
  sent: number;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** Put `key` last in a bounded map (least recently set out first). */
function setBounded<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) {
    const oldest = map.keys().next().value;
    if (oldest !== undefined) map.delete(oldest);
  }
}

export class QueryBuffer {
  #top: TopEntry[] = [];
  #first: number | undefined;
  readonly #samples = new Map<string, UiSample[]>();
  readonly #plans = new Map<string, UiPlan>();
  #locks: UiLockWait[] = [];
  #locksAt: number | null = null;

  /**
   * Take one collection: its metrics (lock.wait's values say it ran, waits or not) and its
   * records, if any.
   */
  add(m: Metrics, batch: Records | undefined): void {
    for (const [domain, records] of Object.entries(batch?.records ?? {})) {
      if (domain === 'lock.wait') continue;
      for (const r of records) this.#one(r);
    }
    if (m.values['lock.wait'] !== undefined) {
      this.#locks = (batch?.records['lock.wait'] ?? []).map(lockOf);
      this.#locksAt = m.begin.getTime();
    }
  }

  #one(r: LogRecord): void {
    const a = r.attributes;
    if (r.event === 'db.server.top_query') {
      this.#first ??= r.time;
      this.#top.push({
        time: r.time,
        digest: str(a[`${D}digest`]) ?? 'other',
        schema: str(a['db.namespace']),
        text: str(a['db.query.text']),
        calls: num(a[`${D}count_star`]) ?? 0,
        seconds: num(a[`${D}sum_timer_wait`]) ?? 0,
        examined: num(a[`${D}examined_rows`]) ?? 0,
        sent: num(a[`${D}returned_rows`]) ?? 0,
      });
      if (this.#top.length > MAX_TOP) this.#top.splice(0, this.#top.length - MAX_TOP);
    } else if (r.event === 'db.server.query_sample') {
      const digest = str(a[`${C}digest`]) ?? '';
      const list = [sampleOf(r), ...(this.#samples.get(digest) ?? [])].slice(0, SAMPLES_PER_DIGEST);
      setBounded(this.#samples, digest, list, MAX_DIGESTS);
    } else if (r.event === 'db.server.query_plan') {
      const digest = str(a[`${C}digest`]) ?? '';
      const plan: UiPlan = {
        digest,
        time: r.time,
        hash: str(a['mysql.query_plan.hash']) ?? '',
        plan: str(a['mysql.query_plan']) ?? '',
        text: str(a['db.query.text']),
      };
      setBounded(this.#plans, digest, plan, MAX_DIGESTS);
    }
  }

  /** The tab's JSON at `now`. */
  view(now: number): UiQueries {
    this.#top = this.#top.filter((e) => e.time > now - HOUR_MS);
    const windowS = Math.max(1, Math.min(3600, Math.round((now - (this.#first ?? now)) / 1000)));
    return {
      windowS,
      top: topOf(this.#top, windowS),
      samples: Object.fromEntries(this.#samples),
      plans: Object.fromEntries(this.#plans),
      locks: this.#locks,
      locksAt: this.#locksAt,
    };
  }
}

/** The hour's entries summed per digest, by total time. */
function topOf(entries: readonly TopEntry[], windowS: number): UiTopQuery[] {
  const by = new Map<string, TopEntry>();
  for (const e of entries) {
    const key = `${e.schema ?? ''}\u0000${e.digest}`;
    const s = by.get(key);
    if (s === undefined) by.set(key, { ...e });
    else {
      s.calls += e.calls;
      s.seconds += e.seconds;
      s.examined += e.examined;
      s.sent += e.sent;
      s.text ??= e.text;
    }
  }
  const total = [...by.values()].reduce((n, e) => n + e.seconds, 0);
  return [...by.values()]
    .sort((a, b) => b.seconds - a.seconds)
    .map((e) => ({
      digest: e.digest,
      schema: e.schema,
      text: e.text,
      calls: e.calls,
      callsPerS: e.calls / windowS,
      meanMs: e.calls > 0 ? (e.seconds * 1000) / e.calls : null,
      share: total > 0 ? e.seconds / total : 0,
      examinedPerSent: e.sent > 0 ? e.examined / e.sent : null,
    }));
}

function sampleOf(r: LogRecord): UiSample {
  const a = r.attributes;
  return {
    time: r.time,
    durationS: num(a[`${C}timer_wait`]),
    text: str(a['db.query.text']),
    user: str(a['user.name']),
    rowsExamined: num(a[`${C}rows_examined`]),
    rowsSent: num(a[`${C}rows_sent`]),
    wait: str(a['mysql.wait_type']),
  };
}

function lockOf(r: LogRecord): UiLockWait {
  const a = r.attributes;
  return {
    type: str(a['sonde.lock.type']) ?? '',
    waitS: num(a['sonde.lock.wait_seconds']),
    table: str(a['sonde.lock.table']),
    index: str(a['sonde.lock.index']),
    waitingId: num(a['sonde.lock.waiting.session_id']),
    waitingUser: str(a['sonde.lock.waiting.user']),
    waitingText: str(a['sonde.lock.waiting.query_text']),
    blockingId: num(a['sonde.lock.blocking.session_id']),
    blockingUser: str(a['sonde.lock.blocking.user']),
    blockingText: str(a['sonde.lock.blocking.query_text']),
    blockingIdle: a['sonde.lock.blocking.idle'] === true,
    blockingIdleS: num(a['sonde.lock.blocking.idle_seconds']),
  };
}
