import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { exposition, type PromSample } from '../prom/exposition.js';
import {
  ADDRESS_LIMIT_TTL_MS,
  GC_BUCKETS,
  ProcessFamilies,
  addressSpaceLimit,
  buildInfoSample,
  commandLineSelfMetrics,
  eventLoopStatsWanted,
} from './process-metrics.js';

/** Each family of an exposition text: its TYPE, HELP and the label names of its series. */
function familiesOf(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^# HELP (\S+) (.*)\n# TYPE \S+ (\S+)\n((?:[^#\n].*\n)*)/gm)) {
    const labels = new Set<string>();
    for (const l of (m[4] ?? '').matchAll(/[{,]([a-z_]+)="/g)) if (l[1] !== 'le') labels.add(l[1] ?? '');
    out.set(m[1] ?? '', `${m[3] ?? ''}: ${m[2] ?? ''} {${[...labels].sort().join()}}`);
  }
  return out;
}

/** Allocate garbage until `families` has seen one more minor GC (a few rounds at most). */
async function collectGarbage(families: ProcessFamilies): Promise<PromSample | undefined> {
  const minor = (): PromSample | undefined =>
    families.samples().find((s) => s.name === 'nodejs_gc_duration_seconds' && s.labels?.kind === 'minor');
  const before = minor()?.value ?? 0;
  for (let round = 0; round < 50 && (minor()?.value ?? 0) <= before; round++) {
    let junk: unknown[] = [];
    for (let i = 0; i < 100_000; i++) junk.push({ i });
    junk = [];
    await new Promise((r) => setTimeout(r, 5 + junk.length));
  }
  return minor();
}

const limitsText = (files: string, address: string): string =>
  'Limit                     Soft Limit           Hard Limit           Units\n' +
  `Max open files            ${files}                 524288               files\n` +
  `Max address space         ${address}            unlimited            bytes\n`;

const value = (
  samples: readonly PromSample[],
  name: string,
  labels?: Record<string, string>,
): number | undefined =>
  samples.find(
    (s) => s.name === name && (labels === undefined || JSON.stringify(s.labels) === JSON.stringify(labels)),
  )?.value;

describe('process metrics', () => {
  it('reads the address space limit as Go does: unlimited is the largest uint64', () => {
    assert.equal(addressSpaceLimit(limitsText('1024', 'unlimited')), 2 ** 64);
    assert.equal(addressSpaceLimit(limitsText('1024', '4294967296')), 4294967296);
    assert.equal(addressSpaceLimit('nothing here'), undefined);
  });

  it("serves prom-client's default families under the same names, HELP, types and labels", async () => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    const families = new ProcessFamilies({ eventLoopStats: true });
    // Garbage collected while both watch, so both serve the GC histogram with its series.
    assert.ok(await collectGarbage(families), 'a minor GC was seen');
    // Reading resets the delay statistics: let the 10 ms timers record a few again.
    await new Promise((r) => setTimeout(r, 50));
    // prom-client lists families with no series (no libuv request open): they hold no labels.
    const theirs = familiesOf(await registry.metrics());
    const ours = familiesOf(exposition(families.samples()));
    for (const [name, helpAndType] of theirs) {
      if (name === 'nodejs_active_requests' || name === 'nodejs_active_handles') {
        // Grouped by type: no series while nothing of the kind is open.
        if (ours.has(name)) assert.equal(ours.get(name), helpAndType, name);
        continue;
      }
      assert.equal(ours.get(name), helpAndType, name);
    }
    // And the one Go's process collector adds (on Linux, where /proc/self/limits exists).
    assert.match(
      ours.get('process_virtual_memory_max_bytes') ?? '',
      /^gauge: Maximum amount of virtual memory/,
    );
    assert.equal(ours.size - theirs.size <= 1, true, [...ours.keys()].filter((n) => !theirs.has(n)).join());
  });

  it('reads the values from the process, V8 and /proc', () => {
    const samples = new ProcessFamilies({ eventLoopStats: false }).samples();
    const cpu = process.cpuUsage();
    const seconds = value(samples, 'process_cpu_seconds_total') ?? -1;
    assert.ok(seconds > 0 && seconds <= (cpu.user + cpu.system) / 1e6, String(seconds));
    const parts =
      (value(samples, 'process_cpu_user_seconds_total') ?? 0) +
      (value(samples, 'process_cpu_system_seconds_total') ?? 0);
    assert.ok(Math.abs(seconds - parts) < 1e-9, `${seconds} = ${parts}`);
    const rss = value(samples, 'process_resident_memory_bytes') ?? 0;
    assert.ok(Math.abs(rss - process.memoryUsage.rss()) < 64 * 1024 * 1024, `${rss}`);
    assert.ok((value(samples, 'process_virtual_memory_bytes') ?? 0) > rss);
    assert.ok((value(samples, 'process_heap_bytes') ?? 0) > 0);
    const fds = readdirSync('/proc/self/fd').length - 1;
    assert.ok(Math.abs((value(samples, 'process_open_fds') ?? 0) - fds) <= 2, `${fds}`);
    assert.ok((value(samples, 'process_max_fds') ?? 0) >= 64);
    const start = value(samples, 'process_start_time_seconds') ?? 0;
    assert.ok(Math.abs(start - (Date.now() / 1000 - process.uptime())) < 1, `${start}`);
    assert.ok((value(samples, 'nodejs_heap_size_used_bytes') ?? 0) > 1024 * 1024);
    assert.ok((value(samples, 'nodejs_heap_space_size_used_bytes', { space: 'old' }) ?? 0) > 0);
    const [major, minor, patch] = process.version.slice(1).split('.');
    assert.deepEqual(samples.find((s) => s.name === 'nodejs_version_info')?.labels, {
      version: process.version,
      major,
      minor,
      patch,
    });
    // Resources by type add up to the total.
    const byType = samples.filter((s) => s.name === 'nodejs_active_resources');
    assert.equal(
      byType.reduce((n, s) => n + s.value, 0),
      value(samples, 'nodejs_active_resources_total'),
    );
  });

  it('times the event loop: the callback delay always, the delay statistics only when asked', async () => {
    const quiet = new ProcessFamilies({ eventLoopStats: false });
    await new Promise((r) => setTimeout(r, 50));
    const lag = value(quiet.samples(), 'nodejs_eventloop_lag_seconds') ?? -1;
    assert.ok(lag >= 0 && lag < 5, String(lag));
    assert.equal(
      quiet.samples().some((s) => s.name.startsWith('nodejs_eventloop_lag_p')),
      false,
      'no statistics unless asked',
    );
    const stats = new ProcessFamilies({ eventLoopStats: true });
    await new Promise((r) => setTimeout(r, 80));
    const s = stats.samples();
    const v = (n: string): number => value(s, `nodejs_eventloop_lag_${n}_seconds`) ?? NaN;
    assert.ok(v('min') > 0 && v('min') <= v('p50') && v('p50') <= v('p90'), JSON.stringify(s.slice(0, 20)));
    assert.ok(v('p90') <= v('p99') && v('p99') <= v('max') && v('stddev') >= 0);
    assert.ok(v('mean') >= v('min') && v('mean') <= v('max'));
    // Read and reset: straight after, nothing was recorded, so nothing is served (not zeros).
    assert.equal(value(stats.samples(), 'nodejs_eventloop_lag_min_seconds'), undefined);
  });

  it('reads SONDE_EVENT_LOOP_STATS', () => {
    assert.equal(eventLoopStatsWanted({}), false);
    assert.equal(eventLoopStatsWanted({ SONDE_EVENT_LOOP_STATS: 'on' }), true);
    assert.equal(eventLoopStatsWanted({ SONDE_EVENT_LOOP_STATS: 'TRUE' }), true);
    assert.equal(eventLoopStatsWanted({ SONDE_EVENT_LOOP_STATS: 'off' }), false);
    // Refused at boot by the command line (see util/env-switch.ts); read as off here.
    assert.equal(eventLoopStatsWanted({ SONDE_EVENT_LOOP_STATS: 'maybe' }), false);
  });

  it('counts garbage collections per kind in cumulative buckets', async () => {
    const families = new ProcessFamilies({ eventLoopStats: false });
    const before = families
      .samples()
      .find((s) => s.name === 'nodejs_gc_duration_seconds' && s.labels?.kind === 'minor');
    const minor = await collectGarbage(families);
    assert.ok(minor?.dist !== undefined, 'a minor GC was seen');
    assert.ok(minor.value > (before?.value ?? 0), `${minor.value} after ${before?.value}`);
    assert.deepEqual(
      minor.dist.points.map(([b]) => b),
      GC_BUCKETS,
    );
    const counts = minor.dist.points.map(([, n]) => n);
    assert.deepEqual(
      counts,
      [...counts].sort((a, b) => a - b),
      'cumulative',
    );
    assert.ok((counts.at(-1) ?? 0) <= minor.dist.count && minor.dist.sum > 0);
  });

  it('reads /proc/self/limits again only once ADDRESS_LIMIT_TTL_MS has passed', () => {
    let reads = 0;
    let clock = 1_000_000;
    const families = new ProcessFamilies({
      readLimits: () => limitsText(String(1000 * ++reads), String(4096 * reads)),
      now: () => clock,
      eventLoopStats: false,
    });
    const served = (): [number | undefined, number | undefined] => {
      const s = families.samples();
      return [value(s, 'process_max_fds'), value(s, 'process_virtual_memory_max_bytes')];
    };
    assert.deepEqual(served(), [1000, 4096]);
    clock += ADDRESS_LIMIT_TTL_MS - 1;
    assert.deepEqual(served(), [1000, 4096]);
    assert.equal(reads, 1);
    clock += 1;
    assert.deepEqual(served(), [2000, 8192]);
    assert.equal(reads, 2);
    // No limits to read (no /proc): both families are left out.
    const none = new ProcessFamilies({ readLimits: () => undefined, eventLoopStats: false }).samples();
    assert.equal(value(none, 'process_max_fds'), undefined);
    assert.equal(value(none, 'process_virtual_memory_max_bytes'), undefined);
  });

  it("adds mysqld_exporter's build info and reload gauges on the command line", () => {
    const self = commandLineSelfMetrics('9.8.7', { eventLoopStats: false });
    const text = exposition(self.samples());
    assert.match(
      text,
      /^mysqld_exporter_build_info\{branch="",goarch="\w+",goos="\w+",goversion="nodev\d[^"]*",revision="",version="9\.8\.7"\} 1$/m,
    );
    assert.match(text, /^mysqld_exporter_config_last_reload_successful 1$/m);
    const at = Number(
      /^mysqld_exporter_config_last_reload_success_timestamp_seconds (\S+)$/m.exec(text)?.[1],
    );
    assert.ok(Math.abs(at - Date.now() / 1000) < 60, String(at));
    self.reloaded(false);
    const after = exposition(self.samples());
    assert.match(after, /^mysqld_exporter_config_last_reload_successful 0$/m);
    const still = Number(
      /^mysqld_exporter_config_last_reload_success_timestamp_seconds (\S+)$/m.exec(after)?.[1],
    );
    assert.equal(still, at, 'a failed reload keeps the last success time');
    assert.equal(buildInfoSample('1.0.0').labels?.version, '1.0.0');
  });
});
