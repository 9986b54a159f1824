/**
 * The process's stdout and stderr, guarded against a reader that went away (`sonde | head`,
 * a dead `| logger`, a closed container log pipe).
 *
 * A write to a pipe whose reader is gone fails with EPIPE, reported as an `error` event on
 * the stream; unheard, that event is an uncaught exception, and printing the exception to
 * the same broken stream fails again. Here each stream gets an `error` listener once: the
 * first failure marks the stream closed, every later write to it is dropped without a
 * system call, and the listeners registered with {@link onOutputClosed} hear about it once
 * (sonde's CLI reports it on the other stream, if that one still works).
 */
/** Anything text is written to (the shape of log/text-output.ts's TextOutput). */
interface TextOutput {
  write(text: string): unknown;
}

export type StdStreamName = 'stdout' | 'stderr';

/** stdout or stderr, with writes dropped once it is closed. */
export interface GuardedOutput extends TextOutput {
  readonly name: StdStreamName;
  /** Why the stream is closed (`write EPIPE`), or undefined while it works. */
  closed(): string | undefined;
  /** When it closed, or undefined while it works. */
  closedAt(): Date | undefined;
}

type ClosedListener = (name: StdStreamName, cause: string) => void;

const listeners: ClosedListener[] = [];

/** A guarded stream: `write` never throws and never reaches a stream known to be closed. */
class Guard implements GuardedOutput {
  readonly name: StdStreamName;
  readonly #stream: NodeJS.WriteStream;
  #cause: string | undefined;
  #at: Date | undefined;

  constructor(name: StdStreamName, stream: NodeJS.WriteStream) {
    this.name = name;
    this.#stream = stream;
    stream.on('error', (err: Error) => this.#close(err));
  }

  closed(): string | undefined {
    return this.#cause;
  }

  closedAt(): Date | undefined {
    return this.#at;
  }

  write(text: string): boolean {
    if (this.#cause !== undefined || this.#stream.destroyed) return false;
    try {
      return this.#stream.write(text);
    } catch (err) {
      this.#close(err);
      return false;
    }
  }

  #close(err: unknown): void {
    if (this.#cause !== undefined) return;
    const code = (err as { code?: unknown } | undefined)?.code;
    this.#cause = typeof code === 'string' && code !== '' ? `write ${code}` : String(err);
    this.#at = new Date();
    for (const l of listeners) {
      try {
        l(this.name, this.#cause);
      } catch {
        // A listener's failure must not undo the guard.
      }
    }
  }
}

let guards: { stdout: Guard; stderr: Guard } | undefined;

function installed(): { stdout: Guard; stderr: Guard } {
  guards ??= { stdout: new Guard('stdout', process.stdout), stderr: new Guard('stderr', process.stderr) };
  return guards;
}

/** The guarded process.stdout (the guard is installed on first use). */
export function guardedStdout(): GuardedOutput {
  return installed().stdout;
}

/** The guarded process.stderr. */
export function guardedStderr(): GuardedOutput {
  return installed().stderr;
}

/** Hear once about each stream that closes; returns the function that stops listening. */
export function onOutputClosed(listener: ClosedListener): () => void {
  installed();
  listeners.push(listener);
  return () => {
    const i = listeners.indexOf(listener);
    if (i >= 0) listeners.splice(i, 1);
  };
}

/** Why `out` is closed, when it is a guarded stream that closed; undefined otherwise. */
export function outputClosed(out: TextOutput): string | undefined {
  return out instanceof Guard ? out.closed() : undefined;
}
