/**
 * error.thread — server errors raised by thread and error. The
 * implementation is shared by the five error.* domains: see ../error-summary.ts.
 */
import type { CollectorHelp, CollectorRegistration } from '../../core/collector.js';
import { errorRegistration } from '../kit/error-summary.js';

export const DOMAIN = 'error.thread';

/** The registry entry (one line in builtin.ts). */
export const registration: CollectorRegistration = errorRegistration('thread');

export const help: CollectorHelp = registration.help;
