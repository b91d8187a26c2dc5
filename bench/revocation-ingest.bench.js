// Issue 15 (item 8): MQTT ingest throughput with the revocation check in place, against the same
// ingest without it. `scanhub serve` of this build ("revocation") and of a base build ("base",
// BENCH_BASE_BIN = that build's bin/scanhub.js, e.g. a worktree of the commit before) are started
// from the CLI in turn, base, revocation, base, ... on fresh deployments, with the load of
// stores-ingest.bench.js (200 gateways, mTLS, QoS 1, PUBACK after commit). The check runs once
// per connection (authenticate), so the figure should not move: target revocation/base >= 0.97.
// Reports min / median / max per build, the ratio of the medians and each build's spread
// ((max - min) / median). Without BENCH_BASE_BIN it says so and measures nothing.
// Env: BENCH_BASE_BIN, BENCH_RUNS (3), BENCH_STORES (sqlite), BENCH_GATEWAYS (200), BENCH_WINDOW (16),
// BENCH_SECONDS (10), BENCH_WARMUP_SECONDS (3).
import { percentile, report } from './lib.js';
import { RUNS, ingestRun, load, startPostgres, summarize } from './stores-lib.js';

const BENCH = 'revocation-ingest';
const baseBin = process.env.BENCH_BASE_BIN;
const kinds = (process.env.BENCH_STORES ?? 'sqlite').split(',');
const settings = {
  bench: BENCH,
  customer: 'bench',
  gatewayCount: Number(process.env.BENCH_GATEWAYS ?? 200),
  window: Number(process.env.BENCH_WINDOW ?? 16),
  seconds: Number(process.env.BENCH_SECONDS ?? 10),
  warmupSeconds: Number(process.env.BENCH_WARMUP_SECONDS ?? 3),
};

if (!baseBin) {
  console.error(`${BENCH}: skipped: set BENCH_BASE_BIN to the bin/scanhub.js of a build without the revocation check (bench/README.md, "Issue 15")`);
  process.exit(0);
}

const pg = kinds.includes('postgres') ? startPostgres(BENCH) : undefined;
try {
  for (const kind of kinds.filter((k) => k === 'sqlite' || pg)) {
    const runs = { base: [], revocation: [] };
    for (let run = 0; run < RUNS; run++) {
      runs.base.push((await ingestRun(kind, pg, { ...settings, bin: baseBin, label: `${kind} base` })).eventsPerSecond);
      runs.revocation.push((await ingestRun(kind, pg, { ...settings, label: `${kind} revocation` })).eventsPerSecond);
    }
    summarize(BENCH, `${kind}_events_per_second`, 'events/s', runs);
    const median = (values) => percentile(values, 50);
    report(BENCH, `${kind}_events_per_second_ratio_revocation_to_base`, median(runs.revocation) / median(runs.base), 'x', 0.97, '>=');
    for (const [build, values] of Object.entries(runs)) {
      report(BENCH, `${kind}_${build}_spread`, (Math.max(...values) - Math.min(...values)) / median(values), 'x');
    }
  }
  report(BENCH, 'load_average_1m_at_end', Number(load().split(' ')[0]), 'load');
} finally {
  pg?.stop();
}
