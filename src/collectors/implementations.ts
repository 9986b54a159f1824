/**
 * Every built-in collector's implementation, imported eagerly: for tests, benches and the
 * generator of the static help (scripts/gen-docs.mjs). The agent goes through builtin.ts,
 * which imports a domain's implementation only when a plan collects it.
 */
import type { CollectorRegistration } from '../core/collector.js';
import { registration as autoinc } from './autoinc/index.js';
import { registration as awsRds } from './aws.rds/index.js';
import { registration as errorAccount } from './error.account/index.js';
import { registration as errorGlobal } from './error.global/index.js';
import { registration as errorHost } from './error.host/index.js';
import { registration as errorThread } from './error.thread/index.js';
import { registration as errorUser } from './error.user/index.js';
import { registration as innodbBufferPool } from './innodb.buffer-pool/index.js';
import { registration as innodb } from './innodb/index.js';
import { registration as perconaResponseTime } from './percona.response-time/index.js';
import { registration as queryResponseTime } from './query.response-time/index.js';
import { EXPORTER_BUILTIN } from './exporter/index.js';
import { registration as replLag } from './repl.lag/index.js';
import { registration as repl } from './repl/index.js';
import { registration as sizeBinlog } from './size.binlog/index.js';
import { registration as sizeDatabase } from './size.database/index.js';
import { registration as sizeTable } from './size.table/index.js';
import { registration as statusGlobal } from './status.global/index.js';
import { registration as stmtCurrent } from './stmt.current/index.js';
import { registration as stmtSchema } from './stmt.schema/index.js';
import { registration as queryTop } from './query.top/index.js';
import { registration as querySample } from './query.sample/index.js';
import { registration as queryPlan } from './query.plan/index.js';
import { registration as lockWait } from './lock.wait/index.js';
import { registration as tls } from './tls/index.js';
import { registration as trx } from './trx/index.js';
import { registration as varGlobal } from './var.global/index.js';
import { registration as waitIoTable } from './wait.io.table/index.js';

/** Every built-in domain's registration. */
export const BUILTIN: readonly CollectorRegistration[] = [
  statusGlobal,
  varGlobal,
  innodb,
  innodbBufferPool,
  repl,
  replLag,
  trx,
  tls,
  stmtCurrent,
  stmtSchema,
  queryTop,
  querySample,
  queryPlan,
  lockWait,
  sizeBinlog,
  sizeDatabase,
  sizeTable,
  autoinc,
  queryResponseTime,
  perconaResponseTime,
  waitIoTable,
  errorGlobal,
  errorAccount,
  errorHost,
  errorUser,
  errorThread,
  awsRds,
  ...EXPORTER_BUILTIN,
];
