/**
 * error.global — server errors raised in total, by error. The
 * implementation is shared by the five error.* domains: see ../error-summary.ts.
 */
import type { CollectorHelp, CollectorRegistration } from '../../core/collector.js';
import { errorRegistration } from '../kit/error-summary.js';

export const DOMAIN = 'error.global';

/** The registry entry (one line in builtin.ts). */
export const registration: CollectorRegistration = errorRegistration('global');

export const help: CollectorHelp = registration.help;
