/**
 * The embedding program's hook on the AWS SDK configuration (Blip's `AWSConfig` factory):
 * sonde asks it before it makes each AWS client, so a program can supply its own
 * credentials (a vault, an assumed role), region or endpoint. The types are sonde's own:
 * the SDK's credential objects and providers fit them.
 */

/** The AWS client sonde is about to make. */
export type AwsService =
  /** Secrets Manager, for `aws.password-secret`. */
  | 'secrets-manager'
  /** The RDS IAM token signer, for `aws.iam-auth`. */
  | 'rds-signer'
  /** RDS `DescribeDBInstances`, for `monitor-loader.aws` discovery. */
  | 'rds'
  /** CloudWatch `GetMetricData`, for the `aws.rds` domain. */
  | 'cloudwatch';

/** What the factory is told. */
export interface AwsConfigContext {
  service: AwsService;
  /** The region sonde resolved (`aws.region`, the RDS hostname, instance metadata); undefined: the SDK's default. */
  region: string | undefined;
  /** The monitor the client is for; '' for RDS discovery. */
  monitorId: string;
}

/** AWS credentials, as the SDK takes them. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** When they expire; a provider is asked again before then. */
  expiration?: Date;
}

/** What the factory returns; each field left out keeps sonde's own choice. */
export interface AwsClientConfig {
  /** Credentials, or a provider the SDK calls (and caches until `expiration`). Default: the SDK's default chain. */
  credentials?: AwsCredentials | (() => Promise<AwsCredentials>);
  /** The region; default the one sonde resolved. */
  region?: string;
  /** The service endpoint URL; default the SDK's (`AWS_ENDPOINT_URL_<SERVICE>` included). */
  endpoint?: string;
}

/** The factory: called before each AWS client sonde makes; a throw fails that call. */
export type AwsConfigFactory = (ctx: AwsConfigContext) => AwsClientConfig | Promise<AwsClientConfig>;
