/**
 * A local Amazon RDS for tests: `DescribeDBInstances` over the Query protocol (form body in,
 * XML out), on the shared fake AWS endpoint, so every call has its SigV4 signature checked
 * against the test credentials first.
 *
 * The instance list is per region (the region of the request's credential scope, since one
 * endpoint serves every region through `AWS_ENDPOINT_URL_RDS`) and may be changed between
 * calls. Pages follow the real API: `MaxRecords` 20–100 (default 100), an opaque `Marker`
 * for the next page; `pageSize` makes the fake's pages smaller still so that a test of two
 * instances already pages.
 */
import type { AwsReply, AwsRequest, AwsServer } from './server.js';
import { queryError, queryReply, startAwsServer, xmlEscape } from './server.js';
import type { TestCredentials } from './sigv4.js';

export const RDS_XMLNS = 'http://rds.amazonaws.com/doc/2014-10-31/';

export interface FakeRdsInstance {
  id: string;
  /** No address: the instance has no endpoint yet (being created). */
  address?: string;
  port?: number;
  engine?: string;
  /** Set for an Aurora cluster member. */
  cluster?: string;
  status?: string;
  tags?: Record<string, string>;
}

export interface FakeRdsOptions {
  credentials: TestCredentials;
  /** region → its instances */
  instances?: Record<string, FakeRdsInstance[]>;
  /** The fake's own page limit (below MaxRecords); default 100. */
  pageSize?: number;
}

export interface FakeRds {
  readonly server: AwsServer;
  /** `http://127.0.0.1:<port>`, for `AWS_ENDPOINT_URL_RDS`. */
  readonly base: string;
  /** Replaces one region's instances. */
  setInstances(region: string, list: FakeRdsInstance[]): void;
  /** Every later call for `region` (all regions: `*`) fails with this error; undefined clears it. */
  failRegion(region: string, error: { code: string; message: string; status?: number } | undefined): void;
  /** The DescribeDBInstances calls that got past the signature check: region and Marker. */
  calls(): { region: string; marker: string | undefined; maxRecords: string | undefined }[];
  close(): Promise<void>;
}

function instanceXml(i: FakeRdsInstance): string {
  const t = (name: string, v: string | number | undefined): string =>
    v === undefined ? '' : `<${name}>${xmlEscape(String(v))}</${name}>`;
  const endpoint =
    i.address === undefined ? '' : `<Endpoint>${t('Address', i.address)}${t('Port', i.port)}</Endpoint>`;
  const tags = Object.entries(i.tags ?? {})
    .map(([k, v]) => `<Tag>${t('Key', k)}${t('Value', v)}</Tag>`)
    .join('');
  return (
    `<DBInstance>${t('DBInstanceIdentifier', i.id)}${t('DBInstanceClass', 'db.t3.micro')}` +
    `${t('Engine', i.engine ?? 'mysql')}${t('DBInstanceStatus', i.status ?? 'available')}` +
    `${endpoint}${t('DBClusterIdentifier', i.cluster)}<TagList>${tags}</TagList></DBInstance>`
  );
}

/** `DescribeDBInstances` against `lists`, paging as the real API does. */
function describe(req: AwsRequest, lists: Map<string, FakeRdsInstance[]>, pageSize: number): AwsReply {
  const params = req.params ?? new URLSearchParams();
  if (params.get('Version') !== '2014-10-31')
    return queryError('InvalidParameterValue', `unknown Version ${params.get('Version') ?? ''}`);
  const maxText = params.get('MaxRecords');
  const max = maxText === null ? 100 : Number(maxText);
  if (!Number.isInteger(max) || max < 20 || max > 100)
    return queryError('InvalidParameterValue', 'Invalid value for MaxRecords. Must be between 20 and 100');
  const marker = params.get('Marker');
  const start =
    marker === null
      ? 0
      : Number(
          Buffer.from(marker, 'base64url')
            .toString()
            .replace(/^page:/, ''),
        );
  if (!Number.isInteger(start) || start < 0) return queryError('InvalidParameterValue', 'Invalid Marker');
  const all = lists.get(req.signature?.region ?? '') ?? [];
  const end = start + Math.min(max, pageSize);
  const next = end < all.length ? `<Marker>${Buffer.from(`page:${end}`).toString('base64url')}</Marker>` : '';
  const body = `<DBInstances>${all.slice(start, end).map(instanceXml).join('')}</DBInstances>${next}`;
  return queryReply('DescribeDBInstances', body, RDS_XMLNS);
}

export async function startFakeRds(opts: FakeRdsOptions): Promise<FakeRds> {
  const lists = new Map(Object.entries(opts.instances ?? {}));
  const failures = new Map<string, { code: string; message: string; status?: number }>();
  const calls: { region: string; marker: string | undefined; maxRecords: string | undefined }[] = [];
  const server = await startAwsServer({
    credentials: opts.credentials,
    service: 'rds',
    operations: {
      DescribeDBInstances: (req) => {
        const region = req.signature?.region ?? '';
        calls.push({
          region,
          marker: req.params?.get('Marker') ?? undefined,
          maxRecords: req.params?.get('MaxRecords') ?? undefined,
        });
        const fail = failures.get(region) ?? failures.get('*');
        if (fail) return queryError(fail.code, fail.message, fail.status ?? 403);
        return describe(req, lists, opts.pageSize ?? 100);
      },
    },
  });
  return {
    server,
    base: server.base,
    setInstances: (region, list) => void lists.set(region, list),
    failRegion: (region, error) => {
      if (error === undefined) failures.delete(region);
      else failures.set(region, error);
    },
    calls: () => [...calls],
    close: () => server.close(),
  };
}
