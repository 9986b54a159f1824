/**
 * Stack traces in TypeScript terms, with the source maps read when a trace is first made.
 *
 * Node's own source-map support (`--enable-source-maps`, `process.setSourceMapsEnabled`)
 * reads and indexes the map of every module as it loads, used or not: about 15 ms of a
 * start for the bundle's chunks. Here a frame's map is read the first time a stack trace
 * names its file (`<file>.js.map` beside it, as esbuild and tsc write them), and kept.
 * Frames keep V8's text; only the location `file:line:column` becomes the original
 * file's path, line and column. A frame without a map, or outside it, stays as it is.
 */
import { readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { fileURLToPath } from 'node:url';

interface LoadedMap {
  map: SourceMap;
  /** The map's own URL: its `sources` are relative to it. */
  url: string;
}

/** file URL or path of a generated file → its map, or null when it has none. */
const maps = new Map<string, LoadedMap | null>();

/** The map beside `file` (a `file:` URL or an absolute path), read once. */
function mapOf(file: string): LoadedMap | null {
  const known = maps.get(file);
  if (known !== undefined) return known;
  let loaded: LoadedMap | null = null;
  try {
    const path = file.startsWith('file:') ? fileURLToPath(file) : file;
    if (path.startsWith('/') && path.endsWith('.js')) {
      const payload = JSON.parse(readFileSync(`${path}.map`, 'utf8')) as SourceMapPayload;
      loaded = { map: new SourceMap(payload), url: `file://${path}.map` };
    }
  } catch {
    loaded = null; // no map (or an unreadable one): the frame stays as V8 wrote it
  }
  maps.set(file, loaded);
  return loaded;
}

/** V8's text of one frame (`CallSite.prototype.toString`, which Node's types do not declare). */
function frameText(site: NodeJS.CallSite): string {
  return (site as NodeJS.CallSite & { toString(): string }).toString();
}

/** One frame's text, its location mapped to the original source when the map has it. */
export function mappedFrame(site: NodeJS.CallSite): string {
  const text = frameText(site);
  const file = site.getFileName();
  const line = site.getLineNumber();
  const column = site.getColumnNumber();
  if (file === undefined || file === null || line === null || column === null) return text;
  const loaded = mapOf(file);
  if (loaded === null) return text;
  const origin = loaded.map.findOrigin(line, column);
  if (!('fileName' in origin)) return text;
  const at = `${file}:${line}:${column}`;
  const i = text.lastIndexOf(at);
  if (i < 0) return text;
  const source = new URL(origin.fileName, loaded.url);
  const name = source.protocol === 'file:' ? fileURLToPath(source) : source.href;
  return `${text.slice(0, i)}${name}:${origin.lineNumber}:${origin.columnNumber}${text.slice(i + at.length)}`;
}

/** Error's text and frames as V8 and Node print them, each frame mapped. */
function prepareStackTrace(error: Error, trace: NodeJS.CallSite[]): string {
  let head: string;
  try {
    head = Error.prototype.toString.call(error);
  } catch {
    head = '<error>';
  }
  const frames = trace.map((site) => {
    try {
      return mappedFrame(site);
    } catch {
      return frameText(site);
    }
  });
  return frames.length === 0 ? head : `${head}\n    at ${frames.join('\n    at ')}`;
}

/** Map every stack trace made from now on (in place of Node's formatting, which has no maps then). */
export function installStackMaps(): void {
  Error.prepareStackTrace = prepareStackTrace;
}
