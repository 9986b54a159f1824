/**
 * error.host — server errors raised by host and error. The
 * implementation is shared by the five error.* domains: see ../error-summary.ts.
 */
import type { CollectorHelp, CollectorRegistration } from '../../core/collector.js';
import { errorRegistration } from '../kit/error-summary.js';

export const DOMAIN = 'error.host';

/** The registry entry (one line in builtin.ts). */
export const registration: CollectorRegistration = errorRegistration('host');

export const help: CollectorHelp = registration.help;
