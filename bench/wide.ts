/**
 * The statements one collection of the wide plan runs (status.global, var.global and innodb
 * with `all: yes`): what the driver's floors of scale.ts and instructions.ts send.
 */
export const WIDE_STATEMENTS: readonly string[] = [
  'SHOW GLOBAL STATUS',
  'SHOW GLOBAL VARIABLES',
  'SELECT subsystem, name, count FROM information_schema.innodb_metrics',
];
