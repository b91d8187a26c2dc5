// MQTT ingest with the revocation check against a build without it (BENCH_BASE_BIN), in pairs of
// alternating order (bench/README.md "revocation-ingest"; target >= 0.97). The check runs once per
// connection, so the figure should not move.
import { againstBase, ingestRun } from './stores-lib.js';

await againstBase(
  'revocation-ingest',
  'revocation',
  async (kind, pg, settings) => (await ingestRun(kind, pg, settings)).eventsPerSecond,
  'without the revocation check (bench/README.md "revocation-ingest")',
);
