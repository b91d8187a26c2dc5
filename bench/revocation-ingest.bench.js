// Issue 15 (item 8): MQTT ingest throughput with the revocation check in place, against the same
// ingest without it. `scanhub serve` of this build ("revocation") and of a base build ("base",
// BENCH_BASE_BIN = that build's bin/scanhub.js, e.g. a worktree of the commit before) are started
// from the CLI in pairs of alternating order (base, revocation; revocation, base; ...; stores-lib.js
// againstBase) on fresh deployments, with the load of
// stores-ingest.bench.js (200 gateways, mTLS, QoS 1, PUBACK after commit). The check runs once
// per connection (authenticate), so the figure should not move: target revocation/base >= 0.97.
// Reports min / median / max per build, the ratio of the medians and each build's spread
// ((max - min) / median). Without BENCH_BASE_BIN it says so and measures nothing.
// Env: BENCH_BASE_BIN, BENCH_RUNS (3), BENCH_STORES (sqlite), BENCH_GATEWAYS (200), BENCH_WINDOW (16),
// BENCH_SECONDS (10), BENCH_WARMUP_SECONDS (3).
import { againstBase, ingestRun } from './stores-lib.js';

await againstBase(
  'revocation-ingest',
  'revocation',
  async (kind, pg, settings) => (await ingestRun(kind, pg, settings)).eventsPerSecond,
  'without the revocation check (bench/README.md, "Issue 15")',
);
