/**
 * Config keys that parse and validate now but whose feature a later release implements.
 * A monitor that actually uses one fails to load with a clear line (at boot: exit 1; on
 * reload: 409), instead of silently doing nothing. None at the moment.
 */
import type { FinalMonitorConfig } from '../core/config.js';

export function unsupportedFeature(_m: FinalMonitorConfig): string | undefined {
  return undefined;
}
