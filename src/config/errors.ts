/**
 * The one error type of the config module. Its message is always a single line that can be
 * shown to a user as is (the CLI prints `server.Boot failed: <message>`), never a password.
 */
import { SondeError } from '../core/errors.js';
import { UnsetVariableError, interpolateEnv } from '../util/interpolate.js';

/**
 * `load`: the file could not be found, read or decoded (CLI event `boot-error`).
 * `invalid`: the file decoded but a value is wrong (CLI event `boot-config-invalid`).
 */
export type ConfigErrorKind = 'load' | 'invalid';

export interface ConfigErrorDetails {
  kind?: ConfigErrorKind;
  /** absolute path of the file the error is about, when there is one */
  file?: string | undefined;
  /** 1-based line in `file` */
  line?: number | undefined;
  /** key path, e.g. `monitors[0].hostname` */
  key?: string | undefined;
  cause?: unknown;
}

/** A config error: one line of text naming the file and key; code `CONFIG_INVALID`. */
export class ConfigError extends SondeError {
  readonly kind: ConfigErrorKind;
  readonly file: string | undefined;
  readonly line: number | undefined;
  readonly key: string | undefined;

  constructor(message: string, details: ConfigErrorDetails = {}) {
    // Collapse any newline a library put in the text: the message must stay one line.
    super('CONFIG_INVALID', message.replace(/\s*\r?\n\s*/g, ' '), { cause: details.cause });
    this.name = 'ConfigError';
    this.kind = details.kind ?? 'invalid';
    this.file = details.file;
    this.line = details.line;
    this.key = details.key;
  }
}

const OS_TEXT: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a directory',
  ENOTDIR: 'not a directory',
  ELOOP: 'too many levels of symbolic links',
  EMFILE: 'too many open files',
};

/**
 * An fs error as Go prints it: `open /etc/x.yaml: no such file or directory`.
 * `path` is the path as the user wrote it (Node's error holds the resolved one).
 */
export function osErrorText(err: unknown, path: string): string {
  const e = err as NodeJS.ErrnoException;
  const code = typeof e?.code === 'string' ? e.code : '';
  const text =
    OS_TEXT[code] ??
    (e instanceof Error ? e.message.replace(/^[A-Z]+: /, '').replace(/, \w+ '.*'$/, '') : String(err));
  const syscall = typeof e?.syscall === 'string' ? e.syscall : 'open';
  return `${syscall} ${path}: ${text}`;
}

/**
 * `${ENV}` interpolation of the value at `key` in `file`. An unset variable without a default
 * is a ConfigError of one line naming the file, the key and the variable:
 * `/etc/sonde.yaml: key mysql.username: environment variable DB_USER is not set (use
 * ${DB_USER:-default} for a default)`.
 */
export function interpolateKey(s: string, env: NodeJS.ProcessEnv, file: string, key: string): string {
  try {
    return interpolateEnv(s, env);
  } catch (err) {
    if (!(err instanceof UnsetVariableError)) throw err;
    throw new ConfigError(`${file}: key ${key}: ${err.message}`, { kind: 'invalid', file, key, cause: err });
  }
}
