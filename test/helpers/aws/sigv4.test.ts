import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Sha256 } from '@smithy/core/checksum';
import { HttpRequest } from '@smithy/core/protocols';
import { SignatureV4 } from '@smithy/signature-v4';
import { Signer } from '@aws-sdk/rds-signer';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

import { verifyAuthorizationHeader, verifyPresignedUrl, type TestCredentials } from './sigv4.js';
import { DescribeDBInstancesCommand, RDSClient } from '@aws-sdk/client-rds';
import { jsonError, jsonReply, queryReply, startAwsServer, type AwsServer } from './server.js';

/** The example credentials of AWS's published SigV4 test suite. */
const EXAMPLE: TestCredentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
};
const TEST: TestCredentials = { accessKeyId: 'AKIATESTSONDE', secretAccessKey: 'test/secret+key' };

async function smithySign(
  creds: TestCredentials,
  req: HttpRequest,
  service: string,
  region: string,
): Promise<HttpRequest> {
  const signer = new SignatureV4({ credentials: creds, region, service, sha256: Sha256 });
  return (await signer.sign(req)) as HttpRequest;
}

void describe('SigV4 verifier (test helper)', () => {
  void it('accepts the get-vanilla vector of the AWS test suite and refuses it altered', () => {
    const req = {
      method: 'GET',
      url: '/',
      headers: {
        host: 'example.amazonaws.com',
        'x-amz-date': '20150830T123600Z',
        authorization:
          'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
      },
      body: Buffer.alloc(0),
    };
    const now = new Date(Date.UTC(2015, 7, 30, 12, 40));
    const ok = verifyAuthorizationHeader(req, EXAMPLE, { now, service: 'service', region: 'us-east-1' });
    assert.equal(ok.ok, true);
    const bad = verifyAuthorizationHeader({ ...req, url: '/?x=1' }, EXAMPLE, { now });
    assert.deepEqual(bad.ok ? undefined : [bad.status, bad.code], [400, 'InvalidSignatureException']);
    const late = verifyAuthorizationHeader(req, EXAMPLE, { now: new Date(now.getTime() + 3600_000) });
    assert.ok(!late.ok && /Signature expired/.test(late.message));
    const otherRegion = verifyAuthorizationHeader(req, EXAMPLE, {
      now,
      region: 'eu-west-1',
      flavour: 'query',
    });
    assert.deepEqual(otherRegion.ok ? undefined : [otherRegion.status, otherRegion.code], [
      403,
      'SignatureDoesNotMatch',
    ]);
  });

  void it('agrees with the SDK signer on a signed POST and refuses a changed body or secret', async () => {
    const body = '{"SecretId":"db/pass word"}';
    const signed = await smithySign(
      TEST,
      new HttpRequest({
        method: 'POST',
        protocol: 'http:',
        hostname: '127.0.0.1',
        port: 4566,
        path: '/a%20b/./c',
        query: { z: 'last', a: ['2', '1'], 'sp ace': 'x y' },
        headers: {
          host: '127.0.0.1:4566',
          'x-amz-target': 'secretsmanager.GetSecretValue',
          'content-type': 'application/x-amz-json-1.1',
        },
        body,
      }),
      'secretsmanager',
      'eu-west-1',
    );
    const url = '/a%20b/./c?z=last&a=2&a=1&sp%20ace=x%20y';
    const req = { method: 'POST', url, headers: lower(signed.headers), body: Buffer.from(body) };
    const v = verifyAuthorizationHeader(req, TEST, { service: 'secretsmanager', region: 'eu-west-1' });
    assert.deepEqual(v.ok ? [v.service, v.region] : v, ['secretsmanager', 'eu-west-1']);
    assert.equal(verifyAuthorizationHeader({ ...req, body: Buffer.from('{}') }, TEST).ok, false);
    const wrong = verifyAuthorizationHeader(req, { ...TEST, secretAccessKey: 'other' });
    assert.equal(wrong.ok, false);
    const unknown = verifyAuthorizationHeader(req, { ...TEST, accessKeyId: 'AKIAOTHER' });
    assert.deepEqual(unknown.ok ? undefined : unknown.code, 'UnrecognizedClientException');
    const scoped = verifyAuthorizationHeader(req, TEST, { service: 'rds' });
    assert.equal(scoped.ok, false);
  });

  void it('accepts an RDS IAM token from the SDK signer as a presigned connect URL, refuses it altered', async () => {
    const creds = { ...TEST, sessionToken: 'session/token=' };
    const signer = new Signer({
      hostname: 'db1.abc.eu-west-1.rds.amazonaws.com',
      port: 3306,
      username: 'iam_user',
      region: 'eu-west-1',
      credentials: creds,
    });
    const token = await signer.getAuthToken();
    const v = verifyPresignedUrl(token, creds, { service: 'rds-db', region: 'eu-west-1' });
    assert.ok(v.ok, JSON.stringify(v));
    assert.equal(v.host, 'db1.abc.eu-west-1.rds.amazonaws.com:3306');
    assert.equal(v.params.get('Action'), 'connect');
    assert.equal(v.params.get('DBUser'), 'iam_user');
    assert.equal(v.expires.getTime() - v.amzDate.getTime(), 900_000);
    const otherUser = token.replace('DBUser=iam_user', 'DBUser=root');
    assert.equal(verifyPresignedUrl(otherUser, creds).ok, false);
    const otherPort = token.replace(':3306/', ':3307/');
    assert.equal(verifyPresignedUrl(otherPort, creds).ok, false);
    const noSession = await new Signer({
      hostname: 'h',
      port: 3306,
      username: 'u',
      region: 'eu-west-1',
      credentials: TEST,
    }).getAuthToken();
    assert.equal(verifyPresignedUrl(noSession, TEST).ok, true);
    const refused = verifyPresignedUrl(noSession, creds);
    assert.ok(!refused.ok && refused.code === 'InvalidClientTokenId', 'the session token is checked');
    const later = new Date(v.amzDate.getTime() + 901_000);
    assert.ok(!verifyPresignedUrl(token, creds, { now: later }).ok);
  });
});

void describe('local AWS server (test helper)', () => {
  let server: AwsServer;
  before(async () => {
    server = await startAwsServer({
      credentials: TEST,
      service: 'secretsmanager',
      region: 'eu-west-1',
      operations: {
        'secretsmanager.GetSecretValue': (r) => {
          const id = (r.input as { SecretId?: string }).SecretId;
          if (id !== 'db')
            return jsonError('ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
          return jsonReply({
            ARN: 'arn:aws:secretsmanager:eu-west-1:1:secret:db',
            Name: 'db',
            SecretString: '{"password":"p"}',
          });
        },
      },
      routes: { 'GET /ping': () => ({ body: 'pong' }) },
    });
  });
  after(async () => {
    await server.close();
  });

  function client(creds: TestCredentials): SecretsManagerClient {
    return new SecretsManagerClient({
      region: 'eu-west-1',
      endpoint: server.base,
      credentials: creds,
      maxAttempts: 1,
    });
  }

  void it('serves a correctly signed SDK call and refuses a wrongly signed one with the AWS error', async () => {
    const out = await client(TEST).send(new GetSecretValueCommand({ SecretId: 'db' }));
    assert.equal(out.SecretString, '{"password":"p"}');
    await assert.rejects(client(TEST).send(new GetSecretValueCommand({ SecretId: 'nope' })), {
      name: 'ResourceNotFoundException',
    });
    await assert.rejects(
      client({ ...TEST, secretAccessKey: 'wrong' }).send(new GetSecretValueCommand({ SecretId: 'db' })),
      {
        name: 'InvalidSignatureException',
      },
    );
    const last = server.requests.at(-1);
    assert.equal(last?.rejected?.code, 'InvalidSignatureException');
    assert.equal(last?.operation, 'secretsmanager.GetSecretValue');
    assert.equal(server.requests.filter((r) => r.signature?.service === 'secretsmanager').length, 2);
    const ping = await fetch(`${server.base}/ping`);
    assert.equal(await ping.text(), 'pong');
  });
});

void describe('local AWS server, Query protocol (test helper)', () => {
  void it('routes an RDS call by Action after checking its signature', async () => {
    const xmlns = 'http://rds.amazonaws.com/doc/2014-10-31/';
    const server = await startAwsServer({
      credentials: TEST,
      service: 'rds',
      region: 'eu-west-1',
      operations: {
        DescribeDBInstances: () =>
          queryReply(
            'DescribeDBInstances',
            '<DBInstances><DBInstance><DBInstanceIdentifier>db1</DBInstanceIdentifier></DBInstance></DBInstances>',
            xmlns,
          ),
      },
    });
    try {
      const rds = (creds: TestCredentials): RDSClient =>
        new RDSClient({ region: 'eu-west-1', endpoint: server.base, credentials: creds, maxAttempts: 1 });
      const out = await rds(TEST).send(new DescribeDBInstancesCommand({}));
      assert.deepEqual(
        out.DBInstances?.map((d) => d.DBInstanceIdentifier),
        ['db1'],
      );
      assert.equal(server.requests[0]?.params?.get('Version'), '2014-10-31');
      await assert.rejects(rds({ ...TEST, secretAccessKey: 'x' }).send(new DescribeDBInstancesCommand({})), {
        name: 'SignatureDoesNotMatch',
      });
    } finally {
      await server.close();
    }
  });
});

function lower(h: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
}
