/**
 * sonde's exporter in the test process: the scrape reader over a Db with the built-in
 * collectors, behind the real HTTP endpoint on a free loopback port.
 */
import { builtinCollectors } from '../../src/collectors/builtin.js';
import type { Db } from '../../src/core/db.js';
import { NO_EVENTS } from '../../src/core/events.js';
import type { ExporterHandle } from '../../src/core/exporter.js';
import type { Plan } from '../../src/core/plan.js';
import type { StatusWriter } from '../../src/core/status.js';
import { startExporter } from '../../src/exporter/server.js';
import { createScrapeReader, type ScrapeReader } from '../../src/exporter/scrape-reader.js';

export interface SondeExporter {
  /** `127.0.0.1:<port>` */
  address: string;
  reader: ScrapeReader;
  handle: ExporterHandle;
  /** Stop the listener, then the reader (the Db stays the caller's). */
  close(): Promise<void>;
}

const NO_STATUS: StatusWriter = { set: () => undefined, delete: () => undefined };

export async function startSondeExporter(
  db: Db,
  plan: Plan,
  opts: { monitorId?: string; status?: StatusWriter } = {},
): Promise<SondeExporter> {
  const monitorId = opts.monitorId ?? 'db';
  const reader = createScrapeReader({ monitorId, db, plan, collectors: builtinCollectors() });
  const handle = await startExporter({
    monitorId,
    listen: '127.0.0.1:0',
    path: '/metrics',
    source: reader,
    status: opts.status ?? NO_STATUS,
    events: NO_EVENTS,
  });
  return {
    address: handle.address,
    reader,
    handle,
    async close() {
      await handle.close();
      await reader.close();
    },
  };
}
