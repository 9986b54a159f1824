/**
 * The one way sonde reads a file it is pointed at at run time (config, plans, monitor files,
 * password and token files, my.cnf, web config, TLS files, translators, the page's files):
 * a regular file of bounded size, or a clear refusal.
 *
 * The file is opened with O_NONBLOCK, so opening a FIFO returns at once instead of waiting
 * for a writer (which would hold the event loop, or a thread of the pool, until one comes);
 * then `fstat` on the open descriptor decides: anything but a regular file (a FIFO, a
 * socket, a device such as `/dev/zero`, also through a symlink) is refused, and
 * so is a file over the size cap, before a byte is read. A file that grows past the cap while
 * it is read is refused too. Errors carry `code` and `syscall` like the operating system's,
 * so callers print them the way they print ENOENT: `open <path>: not a regular file (a FIFO)`.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';

/** The default size cap: 16 MiB, far above any config, plan or certificate bundle. */
export const MAX_FILE_BYTES = 16 * 1024 * 1024;

/** The cap for files holding one secret (password and token files): 64 KiB. */
export const MAX_SECRET_FILE_BYTES = 64 * 1024;

/** A file refused before it was read: not a regular file, or over the size cap. */
export class FileRefusedError extends Error {
  /** `EFTYPE` (not a regular file) or `EFBIG` (over the cap). */
  readonly code: 'EFTYPE' | 'EFBIG';
  readonly syscall = 'open';
  readonly path: string;

  constructor(code: 'EFTYPE' | 'EFBIG', path: string, message: string) {
    super(message);
    this.name = 'FileRefusedError';
    this.code = code;
    this.path = path;
  }
}

export interface ReadOptions {
  /** Size cap in bytes (default {@link MAX_FILE_BYTES}). */
  maxBytes?: number;
}

const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/** What a non-regular file is, for the refusal. */
function kind(s: Stats): string {
  if (s.isFIFO()) return 'a FIFO';
  if (s.isSocket()) return 'a socket';
  if (s.isCharacterDevice()) return 'a character device';
  if (s.isBlockDevice()) return 'a block device';
  return 'not a file';
}

function sizeText(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${bytes / (1024 * 1024)} MiB` : `${bytes / 1024} KiB`;
}

/**
 * The refusal for what `fstat` said, or undefined when the file may be read. A directory is
 * left to the read, which fails at once with the system's EISDIR (`read <path>: is a
 * directory`), as before this reader existed.
 */
function refusal(path: string, s: Stats, max: number): FileRefusedError | undefined {
  if (s.isDirectory()) return undefined;
  if (!s.isFile()) return new FileRefusedError('EFTYPE', path, `not a regular file (${kind(s)})`);
  if (s.size > max) return tooLarge(path, max);
  return undefined;
}

function tooLarge(path: string, max: number): FileRefusedError {
  return new FileRefusedError('EFBIG', path, `larger than ${sizeText(max)}`);
}

/** Read a regular file of at most `maxBytes` bytes; see the module comment. */
export async function readRegularFile(path: string, opts: ReadOptions = {}): Promise<Buffer> {
  const max = opts.maxBytes ?? MAX_FILE_BYTES;
  const fh = await open(path, FLAGS);
  try {
    const refused = refusal(path, await fh.stat(), max);
    if (refused) throw refused;
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(64 * 1024);
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > max) throw tooLarge(path, max);
      chunks.push(buf.subarray(0, bytesRead));
    }
    return Buffer.concat(chunks, total);
  } finally {
    await fh.close();
  }
}

/** {@link readRegularFile} as UTF-8 text. */
export async function readRegularText(path: string, opts: ReadOptions = {}): Promise<string> {
  return (await readRegularFile(path, opts)).toString('utf8');
}

/** Synchronous {@link readRegularFile}, for callers that must not wait (it never blocks on a FIFO). */
export function readRegularFileSync(path: string, opts: ReadOptions = {}): Buffer {
  const max = opts.maxBytes ?? MAX_FILE_BYTES;
  const fd = openSync(path, FLAGS);
  try {
    const refused = refusal(path, fstatSync(fd), max);
    if (refused) throw refused;
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(64 * 1024);
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      total += n;
      if (total > max) throw tooLarge(path, max);
      chunks.push(buf.subarray(0, n));
    }
    return Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}

/** {@link readRegularFileSync} as UTF-8 text. */
export function readRegularTextSync(path: string, opts: ReadOptions = {}): string {
  return readRegularFileSync(path, opts).toString('utf8');
}

/**
 * What to print after `cannot read <file>: ` for an error of these readers: the refusal
 * (`not a regular file (a FIFO)`, `larger than 64 KiB`), else the system's code (`ENOENT`),
 * never the file's content.
 */
export function fileErrorText(err: unknown): string {
  if (err instanceof FileRefusedError) return err.message;
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && code !== '') return code;
  return err instanceof Error ? err.message : String(err);
}
