/**
 * A local AWS Secrets Manager answering `secretsmanager.GetSecretValue` (JSON 1.1) after
 * checking the SigV4 signature: secrets live in `secrets` (id → SecretString) or in
 * `binary` (id → the bytes of a SecretBinary, sent base64 as the service does), ids in
 * `denied` get the AccessDeniedException an IAM policy without the grant produces. Point
 * the SDK at it with `AWS_ENDPOINT_URL_SECRETS_MANAGER=<base>`.
 */
import type { TestCredentials } from './sigv4.js';
import { jsonError, jsonReply, startAwsServer, type AwsServer } from './server.js';

export interface FakeSecretsManager extends AwsServer {
  readonly secrets: Map<string, string>;
  readonly binary: Map<string, Uint8Array>;
  readonly denied: Set<string>;
  /** How many GetSecretValue calls were served per secret id. */
  reads(id: string): number;
}

export const TEST_ACCOUNT = '123456789012';

export async function startSecretsManager(
  credentials: TestCredentials,
  region: string,
): Promise<FakeSecretsManager> {
  const secrets = new Map<string, string>();
  const binary = new Map<string, Uint8Array>();
  const denied = new Set<string>();
  const server = await startAwsServer({ credentials, service: 'secretsmanager', region });
  server.operation('secretsmanager.GetSecretValue', (r) => {
    const id = (r.input as { SecretId?: unknown }).SecretId;
    if (typeof id !== 'string' || id === '') {
      return jsonError('InvalidParameterException', 'You must provide a SecretId.');
    }
    if (denied.has(id)) {
      return jsonError(
        'AccessDeniedException',
        `User: arn:aws:iam::${TEST_ACCOUNT}:user/sonde is not authorized to perform: secretsmanager:GetSecretValue on resource: ${id} because no identity-based policy allows the secretsmanager:GetSecretValue action`,
      );
    }
    const name = id.startsWith('arn:') ? (id.split(':')[6] ?? id) : id;
    const value = secrets.get(name);
    const bytes = binary.get(name);
    if (value === undefined && bytes === undefined)
      return jsonError('ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
    return jsonReply({
      ARN: `arn:aws:secretsmanager:${region}:${TEST_ACCOUNT}:secret:${name}-AbCdEf`,
      Name: name,
      // A secret holds one or the other; a blob travels base64 in AWS JSON.
      ...(value !== undefined
        ? { SecretString: value }
        : { SecretBinary: Buffer.from(bytes ?? new Uint8Array()).toString('base64') }),
      VersionId: '00000000-0000-4000-8000-000000000001',
      VersionStages: ['AWSCURRENT'],
      CreatedDate: Date.now() / 1000,
    });
  });
  return Object.assign(server, {
    secrets,
    binary,
    denied,
    reads: (id: string) =>
      server.requests.filter(
        (q) => q.signature !== undefined && (q.input as { SecretId?: string }).SecretId === id,
      ).length,
  });
}
