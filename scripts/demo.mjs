// Starts a throwaway mariadbd (temp datadir, free port, socket), writes a sonde config
// for it, and runs the built agent (the bundle, as installed) in the foreground. Ctrl-C (or SIGTERM) stops the agent,
// then the database, and removes the temp files. The monitoring account gets exactly the
// privileges the default plan needs on MariaDB (docs/grants.md).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMariaDB } from '../dist/test/helpers/mariadb.js';
import { BIN, binNodeFlags } from '../dist/test/helpers/agent.js';
import { DEMO_SERVER_ARGS, demoConfig, setupDemoDatabase } from '../dist/test/helpers/demo.js';

const db = await startMariaDB({ args: [...DEMO_SERVER_ARGS] });
await setupDemoDatabase(db);
const dir = mkdtempSync(join(tmpdir(), 'sonde-demo-'));
const config = join(dir, 'sonde.yaml');
writeFileSync(config, demoConfig({ apiBind: '127.0.0.1:7522', socket: db.socket }));
process.stderr.write(
  `sonde demo: MariaDB pid ${db.pid} on 127.0.0.1:${db.port} (socket ${db.socket})\n` +
    `sonde demo: config ${config}\n` +
    `sonde demo: try  curl -s 127.0.0.1:7522/status/monitors\n` +
    `sonde demo: and  curl -s 127.0.0.1:9104/metrics\n`,
);
const agent = spawn(
  process.execPath,
  [...binNodeFlags(), BIN, '--config', config, ...process.argv.slice(2)],
  {
    stdio: 'inherit',
  },
);
const forward = (sig) => agent.kill(sig);
process.on('SIGINT', forward);
process.on('SIGTERM', forward);
const code = await new Promise((resolve) => agent.on('exit', (c) => resolve(c ?? 0)));
await db.stop();
rmSync(dir, { recursive: true, force: true });
process.exit(code);
