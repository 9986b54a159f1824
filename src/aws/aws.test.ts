/**
 * The AWS layer against local AWS endpoints that check SigV4 signatures: region detection
 * from instance metadata, Secrets Manager reads, IAM tokens, the RDS CA bundle, and the
 * connection a monitor builds from them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startImds, type FakeImds } from '../../test/helpers/aws/imds.js';
import { startSecretsManager, type FakeSecretsManager } from '../../test/helpers/aws/secrets-manager.js';
import { verifyPresignedUrl, type TestCredentials } from '../../test/helpers/aws/sigv4.js';
import { buildConnection } from '../db/credentials.js';
import { errorMessage } from '../core/errors.js';
import { iamToken } from './iam.js';
import { rdsCaBundle, RDS_CA_FILE } from './rds-ca.js';
import {
  AUTO_REGION_ERROR,
  imdsRegion,
  regionFromRdsHostname,
  resetAutoRegion,
  resolveRegion,
} from './region.js';
import { fetchDbSecret, parseDbSecret } from './secrets.js';

const CREDS: TestCredentials = { accessKeyId: 'AKIASONDEUNIT', secretAccessKey: 'unit/secret+key' };
const REGION = 'eu-west-3';

let imds: FakeImds;
let sm: FakeSecretsManager;
let dir: string;

before(async () => {
  imds = await startImds(undefined);
  sm = await startSecretsManager(CREDS, REGION);
  dir = await mkdtemp(join(tmpdir(), 'sonde-aws-'));
  // The SDK's standard variables: test credentials, local endpoints, no profile files.
  Object.assign(process.env, {
    AWS_ACCESS_KEY_ID: CREDS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: CREDS.secretAccessKey,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: sm.base,
    AWS_EC2_METADATA_SERVICE_ENDPOINT: imds.base,
    AWS_CONFIG_FILE: join(dir, 'none'),
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'none'),
  });
  for (const v of [
    'AWS_SESSION_TOKEN',
    'AWS_PROFILE',
    'AWS_REGION',
    'AWS_DEFAULT_REGION',
    'AWS_ENDPOINT_URL',
  ]) {
    delete process.env[v];
  }
});
after(async () => {
  await imds.close();
  await sm.close();
  await rm(dir, { recursive: true, force: true });
});

describe('AWS region', () => {
  it('reads the region of an RDS endpoint only from its six-field form', () => {
    assert.equal(regionFromRdsHostname('db1.abc123.eu-west-1.rds.amazonaws.com'), 'eu-west-1');
    assert.equal(regionFromRdsHostname('db1.abc123.eu-west-1.rds.amazonaws.com:3307'), 'eu-west-1');
    assert.equal(regionFromRdsHostname('abc123.eu-west-1.rds.amazonaws.com'), undefined);
    assert.equal(regionFromRdsHostname('a.b.c.d.e.f'), undefined);
    assert.equal(regionFromRdsHostname('db1'), undefined);
  });

  it('prefers aws.region, then the RDS hostname, else leaves it to the SDK', async () => {
    const rds = 'db1.abc123.eu-west-1.rds.amazonaws.com';
    assert.equal(await resolveRegion({ region: 'us-east-2', hostname: rds }), 'us-east-2');
    assert.equal(await resolveRegion({ region: '', hostname: rds }), 'eu-west-1');
    assert.equal(await resolveRegion({ hostname: 'db1:3306' }), undefined);
  });

  it('fails auto with the fixed text when the instance metadata has no region, caching nothing', async () => {
    resetAutoRegion();
    imds.region = undefined;
    await assert.rejects(imdsRegion(), (err: unknown) =>
      errorMessage(err).startsWith(`${AUTO_REGION_ERROR}: `),
    );
    imds.region = 'ap-south-2';
    assert.equal(await resolveRegion({ region: 'auto' }), 'ap-south-2');
  });

  it('asks IMDSv2 for a session token first, then the region with it, once per process', async () => {
    resetAutoRegion();
    imds.region = 'sa-east-1';
    const before = imds.requests.length;
    assert.equal(
      await resolveRegion({ region: 'auto', hostname: 'db1.x.eu-west-1.rds.amazonaws.com' }),
      'sa-east-1',
    );
    const asked = imds.requests.slice(before).map((r) => `${r.method} ${r.path} ${r.status}`);
    assert.deepEqual(asked, ['PUT /latest/api/token 200', 'GET /latest/meta-data/placement/region 200']);
    imds.region = 'us-west-1';
    assert.equal(await resolveRegion({ region: 'auto' }), 'sa-east-1', 'cached for auto');
    assert.equal(
      await resolveRegion({ region: 'eu-north-1' }),
      'eu-north-1',
      'an explicit region is not replaced',
    );
    assert.equal(imds.requests.length, before + 2);
  });
});

describe('Secrets Manager', () => {
  it('returns the password and username of a JSON secret, signed for the region', async () => {
    sm.secrets.set('db/main', JSON.stringify({ username: 'app', password: 'pw-Main-1', engine: 'mysql' }));
    sm.secrets.set('db/pw-only', JSON.stringify({ password: 'pw-Only-2' }));
    assert.deepEqual(await fetchDbSecret('db/main', REGION), { username: 'app', password: 'pw-Main-1' });
    assert.deepEqual(
      await fetchDbSecret(`arn:aws:secretsmanager:${REGION}:123456789012:secret:db/pw-only`, REGION),
      {
        password: 'pw-Only-2',
      },
    );
    const last = sm.requests.at(-1);
    assert.deepEqual([last?.signature?.service, last?.signature?.region], ['secretsmanager', REGION]);
  });

  it('says clearly when the secret is missing, denied, not JSON or without a password, never quoting it', async () => {
    sm.secrets.set('db/text', 'plain-Secret-Text-9');
    sm.secrets.set('db/nopw', JSON.stringify({ user: 'x', pass: 'hidden-Pw-8' }));
    sm.denied.add('db/denied');
    const cases: Array<[string, RegExp]> = [
      ['db/none', /^secret db\/none not found \(ResourceNotFoundException\)$/],
      ['db/denied', /^access to secret db\/denied denied: AccessDeniedException: User: .* is not authorized/],
      ['db/text', /^secret db\/text is not JSON: want \{"password": "\.\.\."\}$/],
      ['db/nopw', /^secret db\/nopw has no "password" string$/],
    ];
    for (const [id, want] of cases) {
      await assert.rejects(fetchDbSecret(id, REGION), (err: unknown) => {
        assert.match(errorMessage(err), want);
        assert.ok(!/plain-Secret|hidden-Pw/.test(errorMessage(err)));
        return true;
      });
    }
    assert.throws(() => parseDbSecret('x', '[1]'), /is not a JSON object/);
    assert.throws(() => parseDbSecret('x', undefined), /has neither SecretString nor SecretBinary/);
  });

  it('reads a secret stored as SecretBinary like a SecretString: its bytes are the JSON text', async () => {
    sm.binary.set('db/bin', Buffer.from(JSON.stringify({ username: 'bin', password: 'pw-Bin-ü3' }), 'utf8'));
    sm.binary.set('db/bin-text', Buffer.from('not json at all', 'utf8'));
    assert.deepEqual(await fetchDbSecret('db/bin', REGION), { username: 'bin', password: 'pw-Bin-ü3' });
    await assert.rejects(fetchDbSecret('db/bin-text', REGION), /^Error: secret db\/bin-text is not JSON/);
    // What travelled was a base64 blob, as Secrets Manager sends one.
    assert.equal(sm.reads('db/bin'), 1);
  });

  it('fails when the signature does not match the credentials the service knows', async () => {
    sm.setCredentials({ ...CREDS, secretAccessKey: 'rotated-elsewhere' });
    try {
      await assert.rejects(
        fetchDbSecret('db/main', REGION),
        /cannot read secret db\/main: InvalidSignatureException/,
      );
      assert.equal(sm.requests.at(-1)?.rejected?.code, 'InvalidSignatureException');
    } finally {
      sm.setCredentials(CREDS);
    }
  });
});

/** An IAM target on an RDS host name of the test region, port 3306, user iam_user. */
const rdsTarget = (instance: string) => ({
  host: `${instance}.abc123.eu-west-3.rds.amazonaws.com`,
  port: 3306,
  user: 'iam_user',
  region: REGION,
});

describe('IAM auth token', () => {
  it('is a presigned rds-db connect URL for host, port, user and region', async () => {
    const t = rdsTarget('db1');
    const token = await iamToken(t);
    const v = verifyPresignedUrl(token, CREDS, { service: 'rds-db', region: REGION });
    assert.ok(v.ok, JSON.stringify(v));
    assert.equal(v.host, 'db1.abc123.eu-west-3.rds.amazonaws.com:3306');
    assert.deepEqual([v.params.get('Action'), v.params.get('DBUser')], ['connect', 'iam_user']);
    assert.equal(await iamToken(t), token, 'a young token is reused');
    const other = await iamToken({ ...t, port: 3307 });
    assert.ok(verifyPresignedUrl(other, CREDS).ok);
    assert.notEqual(other, token);
  });

  it('an awsConfig factory signs with its own credentials and region, its tokens cached apart', async () => {
    const own: TestCredentials = { accessKeyId: 'AKIAFACTORYIAM', secretAccessKey: 'factory/iam+key' };
    const asked: unknown[] = [];
    const aws = (ctx: unknown) => {
      asked.push(ctx);
      return { credentials: own, region: 'us-east-2' };
    };
    const t = rdsTarget('db9');
    const token = await iamToken(t, { aws, monitorId: 'm9' });
    assert.ok(verifyPresignedUrl(token, own, { service: 'rds-db', region: 'us-east-2' }).ok);
    assert.equal(verifyPresignedUrl(token, CREDS).ok, false);
    assert.deepEqual(asked, [{ service: 'rds-signer', region: REGION, monitorId: 'm9' }]);
    assert.equal(await iamToken(t, { aws }), token, 'reused within the factory');
    assert.ok(
      verifyPresignedUrl(await iamToken(t), CREDS).ok,
      'without the factory: the process credentials',
    );
    await assert.rejects(
      iamToken(rdsTarget('db10'), {
        aws: () => {
          throw new Error('vault sealed');
        },
      }),
      /awsConfig factory: vault sealed/,
    );
  });

  it('hands a token out again while under 10 minutes old, makes a new one after, and at once when asked fresh', async () => {
    const t = rdsTarget('db2');
    const signedAt = (token: string): string =>
      new URL(`https://${token}`).searchParams.get('X-Amz-Date') ?? '';
    // Tokens are signed to the second: wait past one so a new token shows a new time.
    const nextSecond = () => new Promise((r) => setTimeout(r, 1_100));
    const first = await iamToken(t, { now: () => 0 });
    await nextSecond();
    assert.equal(await iamToken(t, { now: () => 9 * 60_000 }), first, 'reused at 9 minutes');
    const renewed = await iamToken(t, { now: () => 10 * 60_000 });
    assert.ok(signedAt(renewed) > signedAt(first), 'a new token at 10 minutes');
    await nextSecond();
    assert.equal(await iamToken(t, { now: () => 10 * 60_000 + 1 }), renewed, 'the new one is reused');
    const fresh = await iamToken(t, { fresh: true, now: () => 10 * 60_000 + 2 });
    assert.ok(signedAt(fresh) > signedAt(renewed), 'fresh: a new token (after "access denied")');
    assert.ok(verifyPresignedUrl(fresh, CREDS, { service: 'rds-db', region: REGION }).ok);
  });
});

describe('Amazon RDS CA bundle', () => {
  it('ships CA certificates of Amazon RDS, each parsable and none expired', async () => {
    const pem = await rdsCaBundle();
    const blocks = pem.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? [];
    assert.ok(blocks.length > 10);
    for (const b of blocks) {
      const c = new X509Certificate(b);
      assert.ok(c.ca, c.subject);
      assert.match(c.subject, /OU=Amazon RDS/);
      // An expired CA in the bundle means it is an outdated copy: refresh it (docs/aws.md).
      assert.ok(Date.parse(c.validTo) > Date.now(), `expired: ${c.subject} (${c.validTo})`);
    }
    assert.equal(pem, await readFile(RDS_CA_FILE, 'utf8'));
  });

  it('names the missing file and how to fetch it', async () => {
    const gone = join(dir, 'rds.pem');
    await assert.rejects(rdsCaBundle(gone), {
      message: `the Amazon RDS CA bundle ${gone} is missing: fetch it with curl -o ${gone} https://truststore.pki.rds.amazonaws.com/global/global-bundle.pem (or set tls.ca, or aws.disable-auto-tls: true)`,
    });
    await writeFile(gone, 'nothing');
    await assert.rejects(rdsCaBundle(gone), /holds no certificate/);
  });
});

describe('a monitor connection with AWS credentials', () => {
  it('IAM auth: the token as password, cleartext allowed, TLS with the RDS CAs', async () => {
    const spec = await buildConnection({
      id: 'rds1',
      hostname: 'db1.abc123.eu-west-3.rds.amazonaws.com',
      username: 'iam_user',
      password: 'ignored-Pw',
      aws: { 'iam-auth': true },
    });
    assert.equal(
      spec.redactedDsn,
      'iam_user:...@tcp(db1.abc123.eu-west-3.rds.amazonaws.com:3306)/?allowCleartextPasswords=true&interpolateParams=true&parseTime=true&tls=rds',
    );
    assert.equal(spec.allowCleartextPasswords, true);
    assert.equal(spec.tls?.rejectUnauthorized, true);
    const v = verifyPresignedUrl(spec.password(), CREDS, { service: 'rds-db', region: REGION });
    assert.ok(v.ok && v.params.get('DBUser') === 'iam_user' && v.host.endsWith(':3306'));
    assert.ok(verifyPresignedUrl(await spec.cleartextPassword(), CREDS, { region: REGION }).ok);
    assert.ok(!JSON.stringify(spec).includes('X-Amz'), 'the token is not serialised');
  });

  it('Secrets Manager: the secret wins over the config password; errors name the key', async () => {
    sm.secrets.set('mon/secret', JSON.stringify({ username: 'rot_user', password: 'rot-Pw-1' }));
    const m = {
      id: 'm1',
      hostname: '127.0.0.1:3306',
      username: 'cfg_user',
      password: 'cfg-Pw',
      aws: { 'password-secret': 'mon/secret', region: REGION },
    };
    const spec = await buildConnection(m);
    assert.deepEqual([spec.username, spec.password()], ['rot_user', 'rot-Pw-1']);
    assert.equal(
      spec.redactedDsn,
      'rot_user:...@tcp(127.0.0.1:3306)/?interpolateParams=true&parseTime=true&tls=rds',
    );
    const plain = await buildConnection({ ...m, aws: { ...m.aws, 'disable-auto-tls': true } });
    assert.equal(plain.tls, undefined);
    await assert.rejects(buildConnection({ ...m, aws: { 'password-secret': 'mon/gone', region: REGION } }), {
      message: 'aws.password-secret: secret mon/gone not found (ResourceNotFoundException)',
    });
    resetAutoRegion();
    imds.region = undefined;
    await assert.rejects(
      buildConnection({ ...m, aws: { 'password-secret': 'mon/secret', region: 'auto' } }),
      (err) => errorMessage(err).startsWith(`aws.password-secret: ${AUTO_REGION_ERROR}`),
    );
  });
});
