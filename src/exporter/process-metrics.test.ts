import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  ADDRESS_LIMIT_TTL_MS,
  addBuildInfo,
  addressSpaceLimit,
  commandLineSelfMetrics,
  processRegistry,
} from './process-metrics.js';

describe('process metrics', () => {
  it('reads the address space limit as Go does: unlimited is the largest uint64', () => {
    const limits = (v: string) =>
      `Limit                     Soft Limit           Hard Limit           Units\nMax address space         ${v}            unlimited            bytes\n`;
    assert.equal(addressSpaceLimit(limits('unlimited')), 2 ** 64);
    assert.equal(addressSpaceLimit(limits('4294967296')), 4294967296);
    assert.equal(addressSpaceLimit('nothing here'), undefined);
  });

  it('serves the process families, process_virtual_memory_max_bytes and the build info', async () => {
    const self = commandLineSelfMetrics('9.8.7');
    const text = await self.text();
    for (const n of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'process_open_fds',
      'process_max_fds',
      'process_virtual_memory_bytes',
      'process_virtual_memory_max_bytes',
      'process_start_time_seconds',
    ])
      assert.match(text, new RegExp(`^# TYPE ${n} `, 'm'), n);
    assert.match(
      text,
      /^mysqld_exporter_build_info\{branch="",goarch="\w+",goos="\w+",goversion="nodev\d[^"]*",revision="",version="9\.8\.7"\} 1$/m,
    );
    assert.match(text, /^mysqld_exporter_config_last_reload_successful 1$/m);
    assert.match(text, /^mysqld_exporter_config_last_reload_success_timestamp_seconds \d/m);
    self.reloaded(false);
    assert.match(await self.text(), /^mysqld_exporter_config_last_reload_successful 0$/m);
    const r = processRegistry();
    addBuildInfo(r, '1.0.0');
    assert.match(await r.metrics(), /version="1\.0\.0"/);
  });

  it('reads the address space limit again only once ADDRESS_LIMIT_TTL_MS has passed', async () => {
    let reads = 0;
    let clock = 1_000_000;
    const r = processRegistry({
      readLimit: () => {
        reads++;
        return 1000 * reads;
      },
      now: () => clock,
    });
    const served = async (): Promise<string | undefined> =>
      /^process_virtual_memory_max_bytes (\d+)$/m.exec(await r.metrics())?.[1];
    assert.equal(await served(), '1000');
    clock += ADDRESS_LIMIT_TTL_MS - 1;
    assert.equal(await served(), '1000');
    assert.equal(reads, 1);
    clock += 1;
    assert.equal(await served(), '2000');
    assert.equal(reads, 2);
    // No limit to read (no /proc): the family is left out.
    const none = processRegistry({ readLimit: () => undefined });
    assert.doesNotMatch(await none.metrics(), /process_virtual_memory_max_bytes/);
  });
});
