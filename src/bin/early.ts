/**
 * What the entry (bin/sonde.ts) decides before importing the command line: whether the
 * command line is a plain `sonde --version`, which it then answers itself. Small on
 * purpose, with no import: it runs on every start.
 */

/** Program names that always mean mysqld_exporter's command line. */
const EXPORTER_NAMES: ReadonlySet<string> = new Set(['mysqld_exporter', 'prometheus-mysqld-exporter']);

/** Whether sonde was started under one of mysqld_exporter's names (`program`: argv[1], a path). */
export function isExporterProgram(program = ''): boolean {
  const base =
    program
      .split('/')
      .pop()
      ?.replace(/\.(js|mjs|cjs)$/, '') ?? '';
  return EXPORTER_NAMES.has(base);
}

/**
 * The environment variables sonde's command line checks whatever the flags: a bad value
 * fails even `--version` (with the error the full parser prints).
 */
const CHECKED_ENV = [
  'SONDE_DEBUG',
  'BLIP_DEBUG',
  'SONDE_LOG',
  'BLIP_LOG',
  'SONDE_RUN',
  'BLIP_RUN',
  'SONDE_LOG_LEVEL',
  'SONDE_LOG_FORMAT',
];

/**
 * True for `sonde --version` and `sonde -v` alone, under sonde's own name, with none of the
 * checked variables set: the answer is then the version line and nothing else can go
 * wrong. Anything else (other arguments, mysqld_exporter's command line, a variable to
 * check) is left to the full command line, which prints the same line or the error.
 */
export function plainVersionAsked(
  argv: readonly string[],
  program: string | undefined,
  env: NodeJS.ProcessEnv,
): boolean {
  if (argv.length !== 1 || (argv[0] !== '--version' && argv[0] !== '-v')) return false;
  if (isExporterProgram(program)) return false;
  return CHECKED_ENV.every((name) => (env[name] ?? '') === '');
}
