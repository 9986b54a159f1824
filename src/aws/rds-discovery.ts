/**
 * RDS discovery (`monitor-loader.aws.regions`): every DB instance of each listed region,
 * Aurora cluster members included (DescribeDBInstances lists them as instances of their
 * own), becomes one monitor `{id: <DB instance identifier>, hostname: <address>:<port>,
 * aws.region: <region>}`; the loader then applies the monitor defaults like for any source.
 *
 * - Every page is read (`Marker`, 100 instances a page).
 * - An instance without an endpoint yet (being created) is skipped.
 * - Optional filters: `engines` (the instance's engine is one of them, case ignored) and
 *   `tags` (the instance carries every tag with exactly that value).
 * - `auto` in the list is the region this host runs in (EC2 instance metadata); regions are
 *   listed once even when `auto` names one that is also written out.
 * - A failed call fails the whole load, unless the list contains `auto`: then the region is
 *   skipped and reported through `onSkip` (a host outside EC2 keeps its other regions).
 *
 * The AWS SDK is imported on first use, so an agent without RDS discovery never loads it.
 */
import type { DBInstance, RDSClient } from '@aws-sdk/client-rds';
import type { MonitorConfig } from '../core/config.js';
import { errorMessage } from '../core/errors.js';
import type { AwsConfigFactory } from '../core/aws.js';
import { awsClientSettings, awsErrorText, oneLine, withTimeout } from './sdk.js';

/** What the loader asks for: `monitor-loader.aws`. */
export interface RdsDiscoveryConfig {
  regions: readonly string[];
  engines?: readonly string[] | undefined;
  tags?: Readonly<Record<string, string>> | undefined;
}

/** One DB instance as discovery uses it. */
export interface RdsInstance {
  id: string;
  /** Endpoint address; '' while the instance has none. */
  address: string;
  port: number | undefined;
  engine: string;
  tags: Record<string, string>;
}

export interface RdsDiscoveryDeps {
  /** The region of `auto` (EC2 instance metadata); rejects off EC2. */
  autoRegion(): Promise<string>;
  /** Every DB instance of one region, all pages read (default: listDbInstances). */
  list?: (region: string) => Promise<RdsInstance[]>;
  /** A region skipped because the list contains `auto`: the one-line reason. */
  onSkip?(region: string, message: string): void;
  /** What was found in a region: instances listed, monitors kept. */
  onRegion?(region: string, instances: number, monitors: number): void;
}

/** How long one DescribeDBInstances call (one page, retries included) may take. */
const CALL_TIMEOUT_MS = 20_000;
/** The largest page DescribeDBInstances gives. */
const PAGE_SIZE = 100;
const KEY = 'monitor-loader.aws.regions';

/** The monitors of every listed region, in region then listing order. */
export async function discoverRdsMonitors(
  cfg: RdsDiscoveryConfig,
  deps: RdsDiscoveryDeps,
): Promise<MonitorConfig[]> {
  const tolerant = cfg.regions.includes('auto');
  const list = deps.list ?? listDbInstances;
  const out: MonitorConfig[] = [];
  const done = new Set<string>();
  for (const entry of cfg.regions) {
    let region = entry;
    try {
      if (entry === 'auto') region = await deps.autoRegion();
      if (done.has(region)) continue;
      done.add(region);
      const instances = await list(region);
      const monitors = instancesToMonitors(instances, region, cfg);
      deps.onRegion?.(region, instances.length, monitors.length);
      out.push(...monitors);
    } catch (err) {
      const message = `${KEY}: ${region}: ${oneLine(errorMessage(err))}`;
      if (!tolerant) throw new Error(message, { cause: err });
      deps.onSkip?.(region, message);
    }
  }
  return out;
}

/** The instances that pass the filters and have an endpoint, as monitors of `region`. */
export function instancesToMonitors(
  instances: readonly RdsInstance[],
  region: string,
  filters: Pick<RdsDiscoveryConfig, 'engines' | 'tags'> = {},
): MonitorConfig[] {
  const engines = (filters.engines ?? []).map((e) => e.toLowerCase());
  const tags = Object.entries(filters.tags ?? {});
  const out: MonitorConfig[] = [];
  for (const i of instances) {
    if (i.id === '' || i.address === '') continue;
    if (engines.length > 0 && !engines.includes(i.engine.toLowerCase())) continue;
    if (!tags.every(([k, v]) => i.tags[k] === v)) continue;
    const hostname = i.port === undefined ? i.address : `${i.address}:${i.port}`;
    out.push({ id: i.id, hostname, aws: { region } });
  }
  return out;
}

/** An SDK DBInstance as discovery uses it. */
export function fromSdk(db: DBInstance): RdsInstance {
  const tags: Record<string, string> = {};
  for (const t of db.TagList ?? []) if (t.Key !== undefined) tags[t.Key] = t.Value ?? '';
  return {
    id: db.DBInstanceIdentifier ?? '',
    address: db.Endpoint?.Address ?? '',
    port: db.Endpoint?.Port,
    engine: db.Engine ?? '',
    tags,
  };
}

/**
 * Every DB instance of `region` through the AWS SDK (default credential chain; the
 * endpoint may be overridden with `AWS_ENDPOINT_URL_RDS`), following `Marker` to the end.
 * Errors read `DescribeDBInstances: <code>: <message>`.
 */
export async function listDbInstances(region: string, factory?: AwsConfigFactory): Promise<RdsInstance[]> {
  const [sdk, settings] = await Promise.all([
    import('@aws-sdk/client-rds'),
    awsClientSettings('rds', region, factory),
  ]);
  const client: RDSClient = new sdk.RDSClient(settings);
  try {
    const out: RdsInstance[] = [];
    const seen = new Set<string>();
    let marker: string | undefined;
    do {
      let page;
      try {
        const input = { MaxRecords: PAGE_SIZE, ...(marker === undefined ? {} : { Marker: marker }) };
        page = await withTimeout('DescribeDBInstances', CALL_TIMEOUT_MS, (abortSignal) =>
          client.send(new sdk.DescribeDBInstancesCommand(input), { abortSignal }),
        );
      } catch (err) {
        const text = awsErrorText(err);
        throw new Error(text.startsWith('DescribeDBInstances') ? text : `DescribeDBInstances: ${text}`, {
          cause: err,
        });
      }
      for (const db of page.DBInstances ?? []) out.push(fromSdk(db));
      marker = page.Marker || undefined;
      if (marker !== undefined) {
        if (seen.has(marker)) throw new Error('DescribeDBInstances: the same page marker came back twice');
        seen.add(marker);
      }
    } while (marker !== undefined);
    return out;
  } finally {
    client.destroy();
  }
}
