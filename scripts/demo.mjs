/* global fetch */
// Starts a throwaway mariadbd (temp datadir, free port, socket), writes a sonde config
// for it, and runs the built agent (the bundle, as installed) in the foreground. Once the
// agent answers, prints where to look: the web page and a few curl commands. Ctrl-C (or
// SIGTERM) stops the agent, then the database, and removes the temp files. The monitoring
// account gets exactly the
// privileges the default plan needs on MariaDB (docs/grants.md).
//
// The sink is quiet (`noop`: the web page and /metrics show the values); `--log-sink` prints
// every collection on stdout instead. Other arguments go to sonde. SONDE_DEMO_API and
// SONDE_DEMO_EXPORTER change the listeners (default 127.0.0.1:7522 and 127.0.0.1:9104).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startMariaDB } from '../dist/test/helpers/mariadb.js';
import { BIN, binNodeFlags } from '../dist/test/helpers/agent.js';
import { DEMO_SERVER_ARGS, demoConfig, setupDemoDatabase } from '../dist/test/helpers/demo.js';

const api = process.env.SONDE_DEMO_API || '127.0.0.1:7522';
const exporter = process.env.SONDE_DEMO_EXPORTER || '127.0.0.1:9104';
const args = process.argv.slice(2);
const logSink = args.includes('--log-sink');
const sondeArgs = args.filter((a) => a !== '--log-sink');

const db = await startMariaDB({ args: [...DEMO_SERVER_ARGS] });
await setupDemoDatabase(db);
const dir = mkdtempSync(join(tmpdir(), 'sonde-demo-'));
const config = join(dir, 'sonde.yaml');
writeFileSync(config, demoConfig({ apiBind: api, socket: db.socket, exporterListen: exporter, logSink }));
process.stderr.write(
  `sonde demo: MariaDB pid ${db.pid} on 127.0.0.1:${db.port} (socket ${db.socket})\n` +
    `sonde demo: config ${config}\n`,
);
const agent = spawn(process.execPath, [...binNodeFlags(), BIN, '--config', config, ...sondeArgs], {
  stdio: 'inherit',
});
const forward = (sig) => agent.kill(sig);
process.on('SIGINT', forward);
process.on('SIGTERM', forward);
const exited = new Promise((resolve) => agent.on('exit', (c) => resolve(c ?? 0)));
let running = true;
void exited.then(() => (running = false));

/** Once the API answers (the noisy start is over), say where to look. */
async function announce() {
  for (let i = 0; i < 300 && running; i++) {
    const ok = await fetch(`http://${api}/readyz`).then(
      (res) => res.status === 200,
      () => false,
    );
    if (ok) {
      process.stderr.write(
        `\nsonde demo: running. The web page: http://${api}/\n` +
          `sonde demo: try  curl -s ${api}/status/monitors\n` +
          `sonde demo:      curl -s ${api}/monitors\n` +
          `sonde demo:      curl -s ${exporter}/metrics\n` +
          `sonde demo: ${logSink ? 'every collection is printed below' : 'quiet sink (--log-sink prints every collection)'}; Ctrl-C stops sonde and MariaDB\n`,
      );
      return;
    }
    await sleep(200);
  }
}
void announce();
const code = await exited;
await db.stop();
rmSync(dir, { recursive: true, force: true });
process.exit(code);
