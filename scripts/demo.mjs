// Starts a throwaway mariadbd (temp datadir, free port, socket), writes a sonde config
// for it, and runs the built agent in the foreground. Ctrl-C (or SIGTERM) stops the agent,
// then the database, and removes the temp files.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMariaDB } from '../dist/test/helpers/mariadb.js';

const db = await startMariaDB({ args: ['--log-bin=mysql-bin', '--server-id=1'] });
await db.query('CREATE DATABASE blip');
await db.query(
  'CREATE TABLE blip.heartbeat (src_id varchar(200) NOT NULL PRIMARY KEY, src_role varchar(200) NULL DEFAULT NULL, ts timestamp(3) NOT NULL, freq smallint unsigned NOT NULL) ENGINE=InnoDB',
);
await db.createUser('sonde', 'sonde-demo', [
  'PROCESS, REPLICATION CLIENT ON *.*',
  'SELECT ON *.*',
  'INSERT, UPDATE, DELETE ON blip.*',
]);
const dir = mkdtempSync(join(tmpdir(), 'sonde-demo-'));
const config = join(dir, 'sonde.yaml');
writeFileSync(
  config,
  `# sonde demo config: one monitor on a throwaway MariaDB, the default plan, the log sink,
# a heartbeat writer, and the mysqld_exporter emulation on 127.0.0.1:9104.
api:
  bind: 127.0.0.1:7522
mysql:
  username: sonde
  password: sonde-demo
heartbeat:
  freq: 1s
exporter:
  mode: dual
monitors:
  - id: demo
    socket: ${db.socket}
`,
);
process.stderr.write(
  `sonde demo: MariaDB pid ${db.pid} on 127.0.0.1:${db.port} (socket ${db.socket})\n` +
    `sonde demo: config ${config}\n` +
    `sonde demo: try  curl -s 127.0.0.1:7522/status/monitors\n` +
    `sonde demo: and  curl -s 127.0.0.1:9104/metrics\n`,
);
const agent = spawn(
  process.execPath,
  ['dist/src/bin/sonde.js', '--config', config, ...process.argv.slice(2)],
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
