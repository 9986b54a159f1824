/**
 * The web page's first paint with 100 monitors: sonde watching one throwaway MariaDB
 * through 100 monitors, Debian's chromium loading `/` five times (a fresh browser context
 * each, so nothing is cached). Prints first contentful paint and the time until the fleet
 * table holds its rows, from navigation start.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/web-ui.js
 */
import puppeteer from 'puppeteer-core';
import { startMariaDB } from '../test/helpers/mariadb.js';
import { startAgent } from '../test/helpers/agent.js';

const MONITORS = 100;
const RUNS = 5;

const db = await startMariaDB();
await db.createUser('sonde', 'bench-pw', ['PROCESS, REPLICATION CLIENT ON *.*']);
const monitors = Array.from(
  { length: MONITORS },
  (_, i) => `  - id: m${String(i).padStart(3, '0')}\n    socket: ${db.socket}\n`,
);
const agent = await startAgent(
  `api:\n  bind: {{API}}\nmysql:\n  username: sonde\n  password: bench-pw\nsinks:\n  noop:\nmonitors:\n${monitors.join('')}`,
);
const browser = await puppeteer.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
});
try {
  await agent.until(
    'monitors running',
    async () => {
      const s = await agent.monitorsStatus();
      return Object.values(s).filter((m) => m.monitor?.startsWith('running')).length === MONITORS;
    },
    60_000,
  );
  for (let run = 0; run < RUNS; run++) {
    const ctx = await browser.createBrowserContext();
    const page = await ctx.newPage();
    await page.setViewport({ width: 1280, height: 800 });
    let bytes = 0;
    page.on(
      'response',
      (r) =>
        void r.buffer().then(
          (b) => (bytes += b.length),
          () => undefined,
        ),
    );
    await page.goto(`${agent.base}/`);
    await page.waitForFunction(`document.querySelectorAll('#fleet-body tr[data-id]').length > 10`);
    const t = (await page.evaluate(`(() => {
      const fcp = performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1;
      return { fcp, rows: performance.now() };
    })()`)) as { fcp: number; rows: number };
    console.log(
      `run ${run + 1}: first contentful paint ${t.fcp.toFixed(0)} ms, fleet rows drawn by ${t.rows.toFixed(0)} ms`,
    );
    await ctx.close();
  }
} finally {
  await browser.close();
  await agent.stop();
  await db.stop();
}
