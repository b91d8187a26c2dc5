// MQTT ingest with GET /metrics scraped against the same without (BENCH_BASE_BIN), in pairs of
// alternating order (bench/README.md "metrics-ingest"; target >= 0.97). Each run's last scrape must
// count exactly the events acknowledged.
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
  'without /metrics (bench/README.md "metrics-ingest")',
);
if (scrapes.length) {
  report(BENCH, 'scrape_ms_p50_under_load', percentile(scrapes, 50), 'ms');
  report(BENCH, 'scrape_ms_max_under_load', Math.max(...scrapes), 'ms');
}
