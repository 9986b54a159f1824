/**
 * A local HTTP receiver for sink tests: records every request (method, path, headers, raw
 * body) and answers with what the test scripts, by default `200` and an empty body.
 * Loopback only, port 0; `close()` in `after`.
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';

/** One request as it arrived. */
export interface CapturedRequest {
  method: string;
  /** Path and query, e.g. `/v1/metrics`. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** The answer to give: status, optional headers and body. */
export interface ScriptedAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

export interface CaptureServer {
  /** `http://127.0.0.1:<port>` */
  readonly base: string;
  readonly requests: CapturedRequest[];
  /** Answer the next requests with these, in order; afterwards 200 with an empty body. */
  answer(...answers: ScriptedAnswer[]): void;
  /** Hold every answer until `release()` (a hung receiver). */
  hold(): void;
  release(): void;
  close(): Promise<void>;
}

export async function startCaptureServer(): Promise<CaptureServer> {
  const requests: CapturedRequest[] = [];
  const queue: ScriptedAnswer[] = [];
  let held: Array<() => void> | undefined;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
      });
      const a = queue.shift() ?? { status: 200 };
      const reply = (): void => {
        res.writeHead(a.status, a.headers ?? {});
        res.end(a.body ?? '');
      };
      if (held) held.push(reply);
      else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  if (addr === null || typeof addr === 'string') throw new Error('no port');
  return {
    base: `http://127.0.0.1:${addr.port}`,
    requests,
    answer: (...answers) => queue.push(...answers),
    hold: () => {
      held = [];
    },
    release: () => {
      const h = held ?? [];
      held = undefined;
      for (const reply of h) reply();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
