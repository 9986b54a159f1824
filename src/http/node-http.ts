/**
 * `node:http` and `node:https` as Node's own module objects. An ESM `import … from 'node:http'`
 * builds the module's namespace, which reads its lazy `WebSocket`, `CloseEvent` and
 * `MessageEvent` getters and so loads Node's bundled fetch/WebSocket client: about 20 ms of
 * startup on Node 22 and 24 for names sonde never uses. A CommonJS require reads no getter.
 * The listeners on sonde's startup path take `node:http` from here; type imports stay as usual.
 *
 * `node:https` (and with it `node:tls`) is loaded by the first HTTPS listener only: a plain
 * start never needs them, and together they hold about 1.5 MiB of memory and some
 * milliseconds of the start.
 */
import { createRequire } from 'node:module';
import type * as Http from 'node:http';
import type * as Https from 'node:https';

const require = createRequire(import.meta.url);

export const http = require('node:http') as typeof Http;
let httpsModule: typeof Https | undefined;

/** `node:https`, loaded on the first call. */
export function https(): typeof Https {
  return (httpsModule ??= require('node:https') as typeof Https);
}
