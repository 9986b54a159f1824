// @ts-check
/**
 * A program that embeds sonde: its monitors come from the program's own inventory, its
 * plan is built in code, it adds a collector (`app.sessions`) and a sink (`jsonlines`),
 * tags every connection, skips monitors the inventory marks as paused, labels each value
 * before the sinks, and follows the agent's events.
 *
 *   SONDE_INVENTORY=inventory.json node examples/library/embed.mjs
 *
 * inventory.json: [{ "id": "db1", "hostname": "127.0.0.1:3306", "username": "sonde",
 *                    "password": "…", "paused": false }, …]
 * It runs until SIGTERM or SIGINT (or for EMBED_SECONDS seconds when set), then stops.
 */
import { readFile } from 'node:fs/promises';
import { setTimeout } from 'node:timers';
import { createAgent, MetricType } from 'sonde';

/** @typedef {{ id: string, hostname?: string, socket?: string, username: string, password: string, paused?: boolean }} Server */

/** The program's inventory: the servers to watch. */
async function inventory() {
  const file = process.env.SONDE_INVENTORY;
  if (!file) throw new Error('set SONDE_INVENTORY to an inventory JSON file');
  return /** @type {Server[]} */ (JSON.parse(await readFile(file, 'utf8')));
}

/** A collector for domain `app.sessions`: client sessions by user, from the processlist. @type {import('sonde').CollectorRegistration} */
const sessions = {
  help: {
    domain: 'app.sessions',
    description: 'Client sessions per user (the application inventory example)',
    sources: ['SELECT USER, COUNT(*) FROM information_schema.PROCESSLIST GROUP BY USER'],
    options: [],
    errors: [],
    groups: [{ key: 'user', description: 'MySQL user' }],
    meta: [],
    metrics: [{ name: 'count', type: MetricType.Gauge, description: 'Sessions of the user' }],
  },
  create: ({ db }) => ({
    domain: 'app.sessions',
    prepare: async () => undefined,
    collect: async (_level, signal) => {
      const rows = await db.query(
        'SELECT USER AS user, COUNT(*) AS n FROM information_schema.PROCESSLIST GROUP BY USER',
        [],
        { signal },
      );
      return {
        values: rows.map((r) => ({
          name: 'count',
          value: Number(r.n),
          type: MetricType.Gauge,
          group: { user: r.user ?? '' },
        })),
      };
    },
  }),
};

/** A sink writing one JSON line per value to stdout. @type {import('sonde').SinkRegistration} */
const jsonLines = {
  name: 'jsonlines',
  description: 'one JSON object per metric value on stdout',
  create: (ctx) => ({
    name: 'jsonlines',
    send: async (m) => {
      for (const [domain, values] of Object.entries(m.values)) {
        for (const v of values) {
          const line = {
            monitor: ctx.monitorId,
            ts: m.begin.toISOString(),
            metric: `${domain}.${v.name}`,
            value: v.value,
            group: v.group ?? {},
          };
          process.stdout.write(`${JSON.stringify(line)}\n`);
        }
      }
    },
  }),
};

const servers = await inventory();
const agent = createAgent({
  config: { api: { disable: true }, sinks: { jsonlines: {} } },
  hooks: {
    loadMonitors: () =>
      servers.map(({ paused, ...s }) => ({ ...s, tags: { paused: String(paused === true) } })),
    loadPlans: () => [
      {
        name: 'embedded',
        levels: {
          fast: {
            freq: '1s',
            collect: {
              'status.global': { metrics: ['threads_connected', 'queries'] },
              'app.sessions': {},
            },
          },
        },
      },
    ],
    // Every connection says who opened it (performance_schema.session_connect_attrs).
    modifyDb: (options, { monitorId }) => ({
      ...options,
      connectAttributes: { program_name: 'embed-example', monitor: monitorId },
    }),
    startMonitor: (m) => m.tags?.paused !== 'true',
    // Every value gets the program's own label before any sink sees it.
    transformMetrics: (batch) => {
      for (const m of batch)
        for (const values of Object.values(m.values))
          for (const v of values) v.group = { ...v.group, env: 'example' };
    },
  },
  factories: { collectors: [sessions], sinks: [jsonLines] },
});

agent.events.subscribe((e) => {
  if (e.level === 'error' || e.name === 'monitor-started' || e.name === 'monitor-stopped')
    process.stderr.write(`event ${e.name} ${e.monitorId} ${e.message}\n`);
});

// Listen for the stop signals first: a signal during boot or start still stops cleanly.
const seconds = Number(process.env.EMBED_SECONDS ?? 0);
const stopSignal = new Promise((resolve) => {
  process.once('SIGTERM', resolve);
  process.once('SIGINT', resolve);
  if (seconds > 0) setTimeout(resolve, seconds * 1000);
});
await agent.boot();
await agent.start();
await stopSignal;
await agent.stop();
process.stderr.write('stopped\n');
