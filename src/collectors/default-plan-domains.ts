/**
 * The domains of the default plan (default-mysql), imported together: a monitor that starts
 * with that plan needs all eight at once, and one import of this module gives the bundle one
 * file for them (plus what they share with others) instead of one file per domain, each a
 * separate step of the module loader before the first collection. builtin.ts loads these
 * eight from here; every other domain keeps a file of its own.
 */
export { registration as innodb } from './innodb/index.js';
export { registration as repl } from './repl/index.js';
export { registration as replLag } from './repl.lag/index.js';
export { registration as sizeBinlog } from './size.binlog/index.js';
export { registration as sizeDatabase } from './size.database/index.js';
export { registration as sizeTable } from './size.table/index.js';
export { registration as statusGlobal } from './status.global/index.js';
export { registration as varGlobal } from './var.global/index.js';
