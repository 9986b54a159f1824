/**
 * The AWS SDK, loaded on first use only: sonde starts without touching it when no AWS
 * feature is configured. Every AWS call shares one credential provider, the SDK's default
 * chain: environment variables, the shared config and credentials files (profiles, SSO,
 * credential_process), web identity (Kubernetes service accounts), then the ECS and EC2
 * instance metadata endpoints. It caches credentials and refreshes them before they expire.
 *
 * Endpoints follow the SDK's standard variables (`AWS_ENDPOINT_URL`,
 * `AWS_ENDPOINT_URL_<SERVICE>`, `AWS_EC2_METADATA_SERVICE_ENDPOINT`).
 */
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@aws-sdk/types';
import type { AwsConfigFactory, AwsService } from '../core/aws.js';
import { errorMessage } from '../core/errors.js';

let provider: Promise<AwsCredentialIdentityProvider> | undefined;

/** The process-wide default credential chain. */
export function awsCredentials(): Promise<AwsCredentialIdentityProvider> {
  provider ??= import('@aws-sdk/credential-providers').then((m) => m.fromNodeProviderChain());
  // A failed import (not installed) is not cached: the next call tries again.
  provider.catch(() => {
    provider = undefined;
  });
  return provider;
}

/** The settings one SDK client is made with: credentials always, region and endpoint when chosen. */
export interface AwsClientSettings {
  credentials: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  region?: string;
  endpoint?: string;
}

/**
 * The settings of a client for `service`: the embedding program's `awsConfig` factory's
 * answer when there is one (each field it leaves out keeps sonde's choice), else the
 * default credential chain and `region` (undefined: the SDK's default). A factory that
 * throws fails the call: `awsConfig factory: <error>`.
 */
export async function awsClientSettings(
  service: AwsService,
  region: string | undefined,
  factory?: AwsConfigFactory,
  monitorId = '',
): Promise<AwsClientSettings> {
  let own;
  try {
    own = factory === undefined ? undefined : await factory({ service, region, monitorId });
  } catch (err) {
    throw new Error(`awsConfig factory: ${errorMessage(err)}`, { cause: err });
  }
  const chosen = own?.region ?? region;
  return {
    credentials: own?.credentials ?? (await awsCredentials()),
    ...(chosen === undefined ? {} : { region: chosen }),
    ...(own?.endpoint === undefined ? {} : { endpoint: own.endpoint }),
  };
}

/**
 * One line from anything an AWS call throws: `<ErrorName>: <message>`, newlines folded.
 * The SDK's messages name the operation, resource and principal, never a secret value.
 */
export function awsErrorText(err: unknown): string {
  if (err instanceof Error) {
    const name = err.name !== '' && err.name !== 'Error' ? `${err.name}: ` : '';
    return oneLine(`${name}${err.message}`);
  }
  return oneLine(String(err));
}

export function oneLine(s: string): string {
  return s.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}

/** The error name of an SDK error (`ResourceNotFoundException`, `AccessDeniedException`…). */
export function awsErrorName(err: unknown): string {
  return err instanceof Error ? err.name : '';
}

/** Runs `work` with an abort signal that fires after `ms`; the timeout becomes `what timed out after <ms> ms`. */
export async function withTimeout<T>(
  what: string,
  ms: number,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const ac = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      ac.abort();
      reject(new Error(`${what} timed out after ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([work(ac.signal), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
