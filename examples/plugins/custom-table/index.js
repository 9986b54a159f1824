// @ts-check
/**
 * A sample sonde plugin: the `custom.queue` collector, which reads the depth of the
 * application's queues from one of its tables, and the `jsonl` sink, which appends one JSON
 * line per value to a file. List this file (or this folder's package name, once installed)
 * under `plugins:` in sonde.yaml.
 */
/** @import { SondePlugin } from 'sonde' */
import { queueCollector } from './queue-collector.js';
import { jsonlSink } from './jsonl-sink.js';

/** @type {SondePlugin} */
export default {
  name: 'custom-table',
  register(api) {
    api.collector(queueCollector(api));
    api.sink(jsonlSink(api));
  },
};
