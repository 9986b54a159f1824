/**
 * Connections as a DBA configures them: TLS verified against a CA file to a user that
 * requires SSL, and a password file that is re-read when the password changes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { startAgent, type Agent } from '../helpers/agent.js';
import { makeTlsFiles, type TlsFiles } from '../helpers/tls.js';

const PW1 = 'first-Secret-481';
const PW2 = 'second-Secret-926';

let db: MariaDB;
let tls: TlsFiles;
let agent: Agent;

describe('agent connections: TLS, my.cnf and password file', () => {
  before(async () => {
    tls = makeTlsFiles();
    db = await startMariaDB({
      args: [`--ssl-ca=${tls.ca}`, `--ssl-cert=${tls.cert}`, `--ssl-key=${tls.key}`],
    });
    await db.createUser('tlsuser', 'tls-Secret-77', ['PROCESS ON *.*']);
    await db.query("ALTER USER 'tlsuser'@'%' REQUIRE SSL");
    await db.createUser('fileuser', PW1, ['PROCESS ON *.*']);
    await db.createUser('cnfuser', 'cnf-Secret-31', []);
    agent = await startAgent(
      `api:
  bind: {{API}}
plans:
  files: [plan.yaml]
monitors:
  - id: tls
    hostname: 127.0.0.1:${db.port}
    username: tlsuser
    password: tls-Secret-77
    tls:
      ca: ${tls.ca}
  - id: pwfile
    hostname: 127.0.0.1:${db.port}
    username: fileuser
    password-file: pw.txt
  - mycnf: my.cnf
`,
      {
        files: {
          'plan.yaml':
            'kpi:\n  freq: 1s\n  collect:\n    status.global:\n      metrics: [uptime, ssl_accepts]\n',
          'pw.txt': `${PW1}\n`,
          'my.cnf': `# a DBA's client file\n[mysql]\nuser = nobody\n[client]\nuser = cnfuser\npassword = "cnf-Secret-31"\nsocket = ${db.socket}\n`,
        },
      },
    );
  });

  after(async () => {
    await agent?.stop();
    await db?.stop();
    rmSync(tls.dir, { recursive: true, force: true });
  });

  it('connects over TLS verified with tls.ca to a user that requires SSL', async () => {
    const st = await agent.until('tls monitor collected', async () => {
      const s = await agent.monitorsStatus();
      return s.tls?.['level-collect']?.startsWith('last collected') ? s : undefined;
    });
    assert.equal(
      st.tls?.dsn,
      `tlsuser:...@tcp(127.0.0.1:${db.port})/?interpolateParams=true&parseTime=true&tls=tls`,
    );
    assert.equal(st.tls?.['error:status.global'], undefined);
    assert.match(agent.stdout(), /# monitor: {2}tls\n/);
  });

  it('takes user, password and socket from a my.cnf [client] section, and the id from its socket', async () => {
    const st = await agent.until('my.cnf monitor collected', async () => {
      const s = await agent.monitorsStatus();
      return s[db.socket]?.['level-collect']?.startsWith('last collected') ? s : undefined;
    });
    assert.equal(st[db.socket]?.dsn, `cnfuser:...@unix(${db.socket})/?interpolateParams=true&parseTime=true`);
  });

  it('reads the password file, trailing newline stripped, and re-reads it after the password changes', async () => {
    await agent.until('pwfile collected', async () => {
      const s = await agent.monitorsStatus();
      return s.pwfile?.['level-collect']?.startsWith('last collected');
    });
    // Rotate the password: new connections with the old one are refused (1045), so the
    // pool re-reads the file and retries.
    writeFileSync(join(agent.dir, 'pw.txt'), `${PW2}\n`);
    await db.query(`ALTER USER 'fileuser'@'%' IDENTIFIED BY '${PW2}'`);
    await db.query("KILL USER 'fileuser'"); // drop pooled connections so new ones must authenticate
    const mark = agent.stdout().length;
    await agent.until(
      'collection continues with the new password',
      async () => {
        const s = await agent.monitorsStatus();
        return (
          agent.stdout().slice(mark).includes('# monitor:  pwfile') &&
          s.pwfile?.['error:status.global'] === undefined
        );
      },
      20_000,
    );
    // Every connection fileuser has now was opened after KILL USER, so with the new password.
    const live = await agent.until('a new fileuser connection', async () => {
      const [row] = await db.query(
        "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE USER = 'fileuser'",
      );
      return Number(row?.n) > 0 ? Number(row?.n) : undefined;
    });
    assert.ok(live > 0);
    for (const secret of [PW1, PW2, 'tls-Secret-77', 'cnf-Secret-31']) {
      assert.ok(!agent.stdout().includes(secret) && !agent.stderr().includes(secret), 'password printed');
    }
  });
});
