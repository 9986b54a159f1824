/**
 * The environment an AWS SDK client under test runs in: the test credentials (the only
 * ones the fakes accept), no shared config or credentials files, no instance metadata, and
 * the fakes' endpoints (`AWS_ENDPOINT_URL_<SERVICE>`).
 */
import type { TestCredentials } from './sigv4.js';

export const TEST_CREDENTIALS: TestCredentials = {
  accessKeyId: 'AKIATESTSONDERDS',
  secretAccessKey: 'rds/test+secret/key',
};

/** The variables for a child process (or this one): credentials, isolation, `extra`. */
export function awsEnvVars(extra: Record<string, string> = {}): Record<string, string> {
  return {
    AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
    AWS_CONFIG_FILE: '/nonexistent/aws-config',
    AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/aws-credentials',
    AWS_EC2_METADATA_DISABLED: 'true',
    ...extra,
  };
}

/** Variables that would steer the SDK elsewhere; removed while a test runs. */
const CLEARED = ['AWS_PROFILE', 'AWS_SESSION_TOKEN', 'AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_ENDPOINT_URL'];

/** Sets awsEnvVars(extra) on process.env; the function returned puts the old values back. */
export function awsTestEnv(extra: Record<string, string> = {}): () => void {
  const vars = awsEnvVars(extra);
  const saved = new Map<string, string | undefined>();
  for (const k of [...Object.keys(vars), ...CLEARED]) saved.set(k, process.env[k]);
  for (const k of CLEARED) delete process.env[k];
  Object.assign(process.env, vars);
  return () => {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}
