/**
 * Config keys that parse and validate now but whose feature a later release implements.
 * A monitor that actually uses one fails to load with a clear line (at boot: exit 1; on
 * reload: 409), instead of silently doing nothing.
 */
import type { FinalMonitorConfig } from '../core/config.js';

export function unsupportedFeature(m: FinalMonitorConfig): string | undefined {
  if (m.aws?.['iam-auth'] === true) return 'aws.iam-auth: AWS IAM authentication is not supported yet';
  if (m.aws?.['password-secret']) return 'aws.password-secret: AWS Secrets Manager is not supported yet';
  return undefined;
}
