/**
 * A local EC2 instance metadata service (IMDSv2) on the AWS test server: `PUT
 * /latest/api/token` hands out a session token, `GET /latest/meta-data/placement/region`
 * answers the region only to a request that carries it. Point the SDK at it with
 * `AWS_EC2_METADATA_SERVICE_ENDPOINT=<base>`.
 */
import { randomUUID } from 'node:crypto';
import { startAwsServer, type AwsServer } from './server.js';

export interface FakeImds extends AwsServer {
  /** The region it answers; `undefined` makes the region path answer 404. */
  region: string | undefined;
  /** Tokens handed out so far. */
  readonly tokens: string[];
}

export async function startImds(region: string | undefined): Promise<FakeImds> {
  const tokens: string[] = [];
  const server = await startAwsServer();
  const imds = Object.assign(server, { region, tokens }) as FakeImds;
  server.route('PUT /latest/api/token', (r) => {
    const ttl = Number(r.headers['x-aws-ec2-metadata-token-ttl-seconds']);
    if (!(ttl >= 1 && ttl <= 21600)) return { status: 400, body: 'Bad Request' };
    const token = randomUUID();
    tokens.push(token);
    return { status: 200, headers: { 'x-aws-ec2-metadata-token-ttl-seconds': String(ttl) }, body: token };
  });
  server.route('GET /latest/meta-data/placement/region', (r) => {
    const token = r.headers['x-aws-ec2-metadata-token'];
    if (typeof token !== 'string' || !tokens.includes(token)) return { status: 401, body: 'Unauthorized' };
    if (imds.region === undefined) return { status: 404, body: 'Not Found' };
    return { status: 200, body: imds.region };
  });
  return imds;
}
