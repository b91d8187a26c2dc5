// MQTT ingest of this build against another (BENCH_BASE_BIN), side by side in one run, with the
// load of stores-ingest (bench/README.md "ingest-vs-base"): what a change on the ingest path costs.
import { againstBase, ingestRun } from './stores-lib.js';

await againstBase(
  'ingest-vs-base',
  'this',
  async (kind, pg, settings) => (await ingestRun(kind, pg, settings)).eventsPerSecond,
  'to compare this one with',
);
