// MQTT ingest of this build against another build of scanhub: `scanhub serve` of each started from
// the CLI in pairs of alternating order on fresh deployments (stores-lib.js againstBase), with the
// load of stores-ingest.bench.js (200 gateways, mTLS, QoS 1, PUBACK after commit). For a change on
// the ingest path: what it costs or gains, measured side by side in one run.
// Env: BENCH_BASE_BIN (the other build's bin/scanhub.js, e.g. a worktree of the commit before; without
// it the bench says so and measures nothing), BENCH_RUNS (3), BENCH_STORES (sqlite), BENCH_GATEWAYS
// (200), BENCH_WINDOW (16), BENCH_SECONDS (10), BENCH_WARMUP_SECONDS (3).
import { againstBase, ingestRun } from './stores-lib.js';

await againstBase(
  'ingest-vs-base',
  'this',
  async (kind, pg, settings) => (await ingestRun(kind, pg, settings)).eventsPerSecond,
  'to compare this one with',
);
