/**
 * sonde's AWS credentials end to end, against local AWS endpoints that verify SigV4 and a
 * real MariaDB: a password read from Secrets Manager (and re-read after rotation), RDS IAM
 * authentication through a front that checks tokens as RDS does, the refusal to send a
 * token without TLS, and the automatic RDS TLS that refuses a server the RDS CAs did not sign.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { startMariaDB, type MariaDB } from '../helpers/mariadb.js';
import { startAgent, type Agent, type MonitorsStatus } from '../helpers/agent.js';
import { makeTlsFiles, type TlsFiles } from '../helpers/tls.js';
import { startSecretsManager, type FakeSecretsManager } from '../helpers/aws/secrets-manager.js';
import { startIamFront, type IamFront } from '../helpers/aws/iam-mysql-front.js';
import type { TestCredentials } from '../helpers/aws/sigv4.js';

const CREDS: TestCredentials = { accessKeyId: 'AKIASONDEE2E', secretAccessKey: 'e2e/Secret+Key' };
const REGION = 'eu-west-3';
const PW1 = 'sm-First-Pw-3171';
const PW2 = 'sm-Second-Pw-8642';
const BACKEND_PW = 'iam-Backend-Pw-55';

let db: MariaDB;
let tls: TlsFiles;
let sm: FakeSecretsManager;
let front: IamFront;
let plainFront: IamFront;
let agent: Agent;

function collected(s: MonitorsStatus, id: string): boolean {
  return s[id]?.['level-collect']?.startsWith('last collected') === true;
}

describe('AWS credentials end to end', () => {
  before(async () => {
    tls = makeTlsFiles();
    db = await startMariaDB({
      args: [`--ssl-ca=${tls.ca}`, `--ssl-cert=${tls.cert}`, `--ssl-key=${tls.key}`],
    });
    await db.createUser('sm_user', PW1, ['PROCESS ON *.*']);
    await db.createUser('iam_backend', BACKEND_PW, ['PROCESS ON *.*']);
    sm = await startSecretsManager(CREDS, REGION);
    sm.secrets.set('sonde/db', JSON.stringify({ username: 'sm_user', password: PW1 }));
    const frontOpts = {
      backendPort: db.port,
      accounts: { iam_user: { user: 'iam_backend', password: BACKEND_PW } },
      credentials: CREDS,
      region: REGION,
    };
    front = await startIamFront({
      ...frontOpts,
      tls: { key: readFileSync(tls.key, 'utf8'), cert: readFileSync(tls.cert, 'utf8') },
    });
    plainFront = await startIamFront(frontOpts);
    agent = await startAgent(
      `api:
  bind: {{API}}
plans:
  files: [plan.yaml]
monitors:
  - id: sm
    hostname: 127.0.0.1:${db.port}
    username: not-this-one
    aws:
      password-secret: sonde/db
      region: ${REGION}
      disable-auto-tls: true
  - id: smrds
    hostname: 127.0.0.1:${db.port}
    aws:
      password-secret: sonde/db
      region: ${REGION}
  - id: iam
    hostname: 127.0.0.1:${front.port}
    username: iam_user
    aws:
      iam-auth: true
      region: ${REGION}
    tls:
      ca: ${tls.ca}
  - id: iamplain
    hostname: 127.0.0.1:${plainFront.port}
    username: iam_user
    aws:
      iam-auth: true
      region: ${REGION}
      disable-auto-tls: true
`,
      {
        env: {
          AWS_ACCESS_KEY_ID: CREDS.accessKeyId,
          AWS_SECRET_ACCESS_KEY: CREDS.secretAccessKey,
          AWS_SESSION_TOKEN: '',
          AWS_PROFILE: '',
          AWS_REGION: '',
          AWS_ENDPOINT_URL_SECRETS_MANAGER: sm.base,
          AWS_CONFIG_FILE: '/nonexistent/sonde-aws-config',
          AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/sonde-aws-credentials',
        },
        files: {
          'plan.yaml':
            'kpi:\n  freq: 1s\n  collect:\n    status.global:\n      metrics: [uptime, threads_connected]\n',
        },
      },
    );
  });

  after(async () => {
    await agent?.stop();
    await front?.close();
    await plainFront?.close();
    await sm?.close();
    await db?.stop();
    rmSync(tls.dir, { recursive: true, force: true });
  });

  it('collects with the user and password of a Secrets Manager secret', async () => {
    const st = await agent.until('sm collected', async () => {
      const s = await agent.monitorsStatus();
      return collected(s, 'sm') ? s : undefined;
    });
    assert.equal(st.sm?.dsn, `sm_user:...@tcp(127.0.0.1:${db.port})/?interpolateParams=true&parseTime=true`);
    assert.match(agent.stdout(), /# monitor: {2}sm\n/);
    const call = sm.requests.find((r) => r.signature !== undefined);
    assert.deepEqual([call?.signature?.service, call?.signature?.region], ['secretsmanager', REGION]);
  });

  it('heals after the password and the secret are rotated, on the next access denied', async () => {
    const readsBefore = sm.reads('sonde/db');
    sm.secrets.set('sonde/db', JSON.stringify({ username: 'sm_user', password: PW2 }));
    await db.query(`ALTER USER 'sm_user'@'%' IDENTIFIED BY '${PW2}'`);
    await db.query("KILL USER 'sm_user'"); // pooled connections go: the next one must log in
    const mark = agent.stdout().length;
    await agent.until('collection continues with the rotated password', async () => {
      const s = await agent.monitorsStatus();
      return (
        agent.stdout().slice(mark).includes('# monitor:  sm\n') && s.sm?.['error:status.global'] === undefined
      );
    });
    const live = await agent.until('a new sm_user connection', async () => {
      const [row] = await db.query(
        "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE USER = 'sm_user'",
      );
      return Number(row?.n) > 0 ? Number(row?.n) : undefined;
    });
    assert.ok(live > 0);
    assert.ok(sm.reads('sonde/db') > readsBefore, 'the secret was read again');
  });

  it('verifies an RDS-style server against the RDS CAs by itself, refusing a server they did not sign', async () => {
    const st = await agent.until('smrds reports its TLS failure', async () => {
      const s = await agent.monitorsStatus();
      const text = JSON.stringify(s.smrds ?? {});
      return /certificate/i.test(text) ? s : undefined;
    });
    assert.ok(!collected(st, 'smrds'));
    assert.match(st.smrds?.dsn ?? '', /&tls=rds$/);
  });

  it('logs in with an IAM token: a presigned connect URL for host, port, user and region, over TLS', async () => {
    const st = await agent.until('iam collected', async () => {
      const s = await agent.monitorsStatus();
      return collected(s, 'iam') ? s : undefined;
    });
    assert.equal(
      st.iam?.dsn,
      `iam_user:...@tcp(127.0.0.1:${front.port})/?allowCleartextPasswords=true&interpolateParams=true&parseTime=true&tls=iam`,
    );
    const admitted = front.attempts.filter((a) => a.admitted);
    assert.ok(admitted.length > 0);
    for (const a of admitted) {
      assert.equal(a.tls, true);
      assert.ok(a.verdict?.ok);
      if (a.verdict?.ok) {
        assert.equal(a.verdict.host, `127.0.0.1:${front.port}`);
        assert.deepEqual([a.verdict.service, a.verdict.region], ['rds-db', REGION]);
        assert.equal(a.verdict.params.get('DBUser'), 'iam_user');
      }
    }
    assert.equal(front.attempts.filter((a) => !a.admitted).length, 0, 'every token sonde sent was valid');
  });

  it('refuses to send the IAM token over a connection without TLS', async () => {
    await agent.until('iamplain reports the refusal', async () => {
      const s = await agent.monitorsStatus();
      return /without TLS: refused, nothing sent/.test(JSON.stringify(s.iamplain ?? {}));
    });
    assert.ok(plainFront.attempts.length > 0, 'sonde did reach the plain front');
    for (const a of plainFront.attempts) {
      assert.deepEqual([a.tls, a.password, a.admitted], [false, undefined, false]);
    }
  });

  it('prints no password, secret or token', () => {
    const out = agent.stdout() + agent.stderr();
    for (const s of [PW1, PW2, BACKEND_PW, 'X-Amz-Signature', CREDS.secretAccessKey]) {
      assert.ok(!out.includes(s), `printed: ${s}`);
    }
  });
});
