/**
 * Sharding without a coordinator: n agents read the same monitor list and each keeps the
 * monitors whose id hashes into its own shard, so every monitor is collected by exactly one
 * of them and no agent needs to know about the others.
 *
 * The hash is the one Prometheus' `hashmod` relabel action computes, so a Prometheus job can
 * reproduce the split: take the MD5 digest (16 bytes) of the monitor id's UTF-8 bytes, read
 * its second half (bytes 8 to 15) as one unsigned 64-bit integer, most significant byte
 * first, and take that integer modulo n. The first half of the digest plays no part. The
 * integer does not fit a JavaScript number, hence BigInt.
 */
import { hostname as osHostname } from 'node:os';

/** This agent's shard: it keeps the monitors whose hash modulo `count` is `index`. */
export interface Shard {
  index: number;
  count: number;
}

/** `index/count`, as `--shard` takes it and `GET /status` shows it. */
export function formatShard(s: Shard): string {
  return `${s.index}/${s.count}`;
}

/** The shard (0 to count − 1) that monitor `id` falls in among `count` shards. */
export function shardOfId(id: string, count: number): number {
  const digest = process.getBuiltinModule('node:crypto').createHash('md5').update(id, 'utf8').digest();
  return Number(digest.readBigUInt64BE(8) % BigInt(count));
}

/** Whether this agent's shard keeps monitor `id`. */
export function inShard(id: string, shard: Shard): boolean {
  return shardOfId(id, shard.count) === shard.index;
}

/** Where the `ordinal/n` form finds this pod's ordinal. */
export interface OrdinalSource {
  /** `SONDE_SHARD_ORDINAL` (e.g. the pod-index label through the downward API); '' = unset. */
  ordinal?: string | undefined;
  /** The host name: a StatefulSet pod's is `<statefulset>-<ordinal>`. */
  hostname: string;
}

/** The ordinal source of this process: `SONDE_SHARD_ORDINAL`, then `HOSTNAME`, then the OS. */
export function processOrdinalSource(env: NodeJS.ProcessEnv = process.env): OrdinalSource {
  const host = env.HOSTNAME;
  return {
    ordinal: env.SONDE_SHARD_ORDINAL,
    hostname: host !== undefined && host !== '' ? host : osHostname(),
  };
}

/** Whole decimal numbers only: no sign, no exponent, at most 9 digits. */
const WHOLE = /^\d{1,9}$/;

/** The ordinal of the `ordinal/n` form, or a problem (without the `invalid …` prefix). */
function ordinalOf(src: OrdinalSource): { index: number; from: string } | { problem: string } {
  const env = src.ordinal ?? '';
  if (env !== '') {
    if (!WHOLE.test(env)) return { problem: `SONDE_SHARD_ORDINAL "${env}" is not a whole number` };
    return { index: Number.parseInt(env, 10), from: `SONDE_SHARD_ORDINAL=${env}` };
  }
  const short = src.hostname.split('.')[0] ?? '';
  const m = /-(\d{1,9})$/.exec(short);
  if (!m)
    return {
      problem: `host name "${short}" does not end in -<ordinal> (a StatefulSet pod is <name>-<ordinal>); set SONDE_SHARD_ORDINAL or give i/n`,
    };
  return { index: Number.parseInt(m[1] ?? '', 10), from: `host name ${short}` };
}

/**
 * Parse `i/n` (0 ≤ i < n) or `ordinal/n` (i from the pod's ordinal, see OrdinalSource).
 * `what` names the flag or variable in the error, e.g. `--shard` or `SONDE_SHARD`; the error
 * is one line: `invalid --shard "3/3": …`.
 */
export function parseShard(text: string, what: string, source: () => OrdinalSource): Shard {
  const fail = (why: string): never => {
    throw new Error(`invalid ${what} "${text}": ${why}`);
  };
  const m = /^([^/]*)\/([^/]*)$/.exec(text.trim());
  const [i, n] = [m?.[1] ?? '', m?.[2] ?? ''];
  if (!m || !WHOLE.test(n) || (i !== 'ordinal' && !WHOLE.test(i)))
    return fail('want i/n with whole numbers 0 <= i < n (e.g. 1/3), or ordinal/n');
  const count = Number.parseInt(n, 10);
  if (count < 1) return fail('the shard count n must be at least 1');
  if (i !== 'ordinal') {
    const index = Number.parseInt(i, 10);
    if (index >= count) return fail(`the shard index must be below n (shards are 0 to ${count - 1})`);
    return { index, count };
  }
  const o = ordinalOf(source());
  if ('problem' in o) return fail(o.problem);
  if (o.index >= count)
    return fail(
      `ordinal ${o.index} (from ${o.from}) is not below n=${count}: n must equal the number of agents (the StatefulSet's replicas)`,
    );
  return { index: o.index, count };
}
