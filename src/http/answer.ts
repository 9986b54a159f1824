/**
 * Writing answers on `node:http`, shared by every sonde listener (the management API, the
 * exporter, the probe listener): a whole body with its length, a one-line text reason, and
 * the 405 refusal with its `Allow` header. A HEAD request gets the headers, never the body.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The content type of every text answer and error reason. */
export const TEXT_PLAIN = 'text/plain; charset=utf-8';

/** Extra answer headers, written after `Content-Type` and `Content-Length`. */
export type AnswerHeaders = Readonly<Record<string, string>>;

/** Answer `status` with `body` and its length (no body for HEAD). */
export function send(
  res: ServerResponse,
  req: IncomingMessage,
  status: number,
  contentType: string,
  body: Buffer | string,
  headers: AnswerHeaders = {},
): void {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': String(bytes.length), ...headers });
  res.end(req.method === 'HEAD' ? undefined : bytes);
}

/** An empty answer: `Content-Length: 0` and no content type. */
export function sendEmpty(res: ServerResponse, status: number, headers: AnswerHeaders = {}): void {
  res.writeHead(status, { 'Content-Length': '0', ...headers });
  res.end();
}

/** Text reasons are one line: any line break inside becomes a space. */
export function oneLine(text: string): string {
  return text.replace(/\r\n|[\r\n]/g, ' ');
}

/** Answer `status` with one line of text (line breaks made spaces) and a final `\n`. */
export function sendText(
  res: ServerResponse,
  req: IncomingMessage,
  status: number,
  text: string,
  headers: AnswerHeaders = {},
): void {
  send(res, req, status, TEXT_PLAIN, `${oneLine(text)}\n`, headers);
}

/** Refuse a method the path does not take: 405, `Allow: <allow>` and a one-line reason. */
export function refuseMethod(
  res: ServerResponse,
  req: IncomingMessage,
  allow: string,
  text: string,
  headers: AnswerHeaders = {},
): void {
  sendText(res, req, 405, text, { Allow: allow, ...headers });
}
