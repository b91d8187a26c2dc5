// Issue 16 (item 3): MQTT ingest throughput with GET /metrics in place and scraped, against the
// same ingest without it. `scanhub serve` of this build ("metrics", scraped every BENCH_SCRAPE_MS,
// far more often than Prometheus' usual 15 s) and of a base build ("base", BENCH_BASE_BIN = that
// build's bin/scanhub.js, e.g. a build of the commit before) are started from the CLI in pairs of
// alternating order (base, metrics; metrics, base; ...; stores-lib.js againstBase) on fresh
// deployments, with the load of stores-ingest.bench.js (200 gateways, mTLS, QoS 1, PUBACK after
// commit). Ingest keeps the plain counters it kept before and
// adds one histogram observation per batch, so the figure should not move: target metrics/base
// >= 0.97. Each run's last scrape must count exactly the events acknowledged.
// Reports min / median / max per build, the ratio of the medians, each build's spread and the
// scrape's own duration. Without BENCH_BASE_BIN it says so and measures nothing.
// Env: BENCH_BASE_BIN, BENCH_RUNS (3), BENCH_STORES (sqlite), BENCH_GATEWAYS (200), BENCH_WINDOW (16),
// BENCH_SECONDS (10), BENCH_WARMUP_SECONDS (3), BENCH_SCRAPE_MS (1000; 0: no scrape until the
// load is over, which tells the build's own cost from the scrapes').
import { percentile, report } from './lib.js';
import { againstBase, ingestRun } from './stores-lib.js';

const BENCH = 'metrics-ingest';
const scrapeMs = Number(process.env.BENCH_SCRAPE_MS ?? 1000);

/** One scrape: its duration in ms and scanhub_ingest_events_total. */
async function scrape(url) {
  const started = performance.now();
  const response = await fetch(`${url}/metrics`);
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET /metrics: ${response.status} ${text}`);
  const events = Number(/^scanhub_ingest_events_total (\d+)$/m.exec(text)?.[1]);
  return { ms: performance.now() - started, events };
}

/** Scrapes every scrapeMs while the load runs; stopping scrapes once more and returns the durations and the last count. */
function scraper(server) {
  const durations = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped && scrapeMs > 0) {
      durations.push((await scrape(server.url)).ms);
      await new Promise((resolve) => setTimeout(resolve, scrapeMs));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    const last = await scrape(server.url);
    return { durations, events: last.events };
  };
}

const scrapes = [];
await againstBase(
  BENCH,
  'metrics',
  async (kind, pg, settings) => {
    const measured = await ingestRun(kind, pg, { ...settings, during: scraper });
    if (measured.beside.events !== measured.acked) throw new Error(`${kind}: /metrics counted ${measured.beside.events} events, ${measured.acked} were acknowledged`);
    scrapes.push(...measured.beside.durations);
    return measured.eventsPerSecond;
  },
  'without /metrics (bench/README.md, "Issue 16")',
);
if (scrapes.length) {
  report(BENCH, 'scrape_ms_p50_under_load', percentile(scrapes, 50), 'ms');
  report(BENCH, 'scrape_ms_max_under_load', Math.max(...scrapes), 'ms');
}
