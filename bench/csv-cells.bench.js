// The CSV writer of exports in one thread, without a server (bench/README.md "csv-cells"): what the
// formula rule of src/domain/csv.ts costs, safe against raw cells alternating round by round. Run
// against an older dist/ it measures the code before the rule (its csvRecord ignores the mode).
import { randomUUID } from 'node:crypto';
import { rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { csvRecord } from '../dist/domain/csv.js';
import { writeEventsCsv } from '../dist/export/csv-writer.js';
import { sqliteLocator } from '../dist/store/open.js';
import { openSqliteStore } from '../dist/store/sqlite/store.js';
import { report } from './lib.js';
import { CUSTOMER, seededDataDir } from './events-data.js';

const BENCH = 'csv-cells';
const DAY = 24 * 3600 * 1000;
const CHUNK = 5000;
const count = Number(process.env.BENCH_CELLS_ROWS ?? 500_000);
const rounds = Number(process.env.BENCH_CELLS_ROUNDS ?? 7);
const MODES = ['safe', 'raw'];

/** Best and median rows/s, and best rows per CPU second, of each mode over the rounds, the modes alternating. */
async function measure(run) {
  const rates = { safe: [], raw: [] };
  const cpuRates = { safe: [], raw: [] };
  for (const mode of MODES) await run(mode); // warm-up: optimised code, caches and page cache for both
  for (let round = 0; round < rounds; round++) {
    for (const mode of round % 2 ? [...MODES].reverse() : MODES) {
      const began = performance.now();
      const cpu = process.cpuUsage();
      const written = await run(mode);
      const { user, system } = process.cpuUsage(cpu);
      rates[mode].push(written / ((performance.now() - began) / 1000));
      cpuRates[mode].push(written / ((user + system) / 1e6));
    }
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  return Object.fromEntries(
    MODES.map((mode) => [mode, { best: Math.max(...rates[mode]), median: median(rates[mode]), cpu: Math.max(...cpuRates[mode]) }]),
  );
}

// 1. The cell writer alone.
const gateways = Array.from({ length: 20 }, () => randomUUID());
const rows = Array.from({ length: count }, (_, i) => {
  const telemetry = i % 10 === 0;
  const scanCode = telemetry ? null : i % 1000 === 1 ? `=HYPERLINK("http://x/${i}","y")` : `40063813${10000 + (i % 90000)}`;
  return [
    randomUUID(), 'event', telemetry ? 'telemetry' : 'scan', 1704067200000 + i * 259,
    scanCode, telemetry ? null : 80 + (i % 100), telemetry ? null : 'EAN_13', `M001-${100000 + (i % 400)}`,
    telemetry ? 20 + (i % 80) : null, '2.4.1', telemetry ? -5.5 + (i % 10) : null,
    gateways[i % 20], 'picking', `Station ${i % 20}`, telemetry ? i % 5000 : null,
  ];
});
let bytes = 0;
const cells = await measure((mode) => {
  for (let from = 0; from < rows.length; from += CHUNK) {
    let text = '';
    for (let i = from; i < Math.min(rows.length, from + CHUNK); i++) text += csvRecord(rows[i], mode);
    bytes += text.length; // used, so that the loop is not optimised away
  }
  return rows.length;
});
for (const mode of MODES) {
  report(BENCH, `csv_record_${mode}_best`, cells[mode].best, 'rows/s');
  report(BENCH, `csv_record_${mode}_median`, cells[mode].median, 'rows/s');
  report(BENCH, `csv_record_${mode}_cpu_best`, cells[mode].cpu, 'rows per CPU s');
}
report(BENCH, 'csv_record_rows', rows.length, 'rows');
report(BENCH, 'csv_record_chars_written', bytes, 'chars');

// 2. The export writer of one worker over one day of the data set (about 333,000 rows at 10 M events).
const data = await seededDataDir((metric, value, unit) => report(BENCH, metric, value, unit));
// A reader as an export worker opens it (read-only, a 2 MB page cache).
const store = openSqliteStore(sqliteLocator(data.dataDir), 'reader');
const file = join(tmpdir(), `scanhub-csv-cells-${process.pid}.csv`);
const range = { start: data.start + DAY, end: data.start + 2 * DAY };
const sizes = {};
try {
  const writer = await measure(async (mode) => {
    const written = await writeEventsCsv(store.events, CUSTOMER, range, file, true, mode);
    sizes[mode] = statSync(file).size;
    return written;
  });
  for (const mode of MODES) {
    report(BENCH, `write_events_csv_${mode}_best`, writer[mode].best, 'rows/s');
    report(BENCH, `write_events_csv_${mode}_median`, writer[mode].median, 'rows/s');
    report(BENCH, `write_events_csv_${mode}_cpu_best`, writer[mode].cpu, 'rows per CPU s');
    report(BENCH, `write_events_csv_${mode}_file_mb`, sizes[mode] / 1024 / 1024, 'MB');
  }
} finally {
  await store.close();
  rmSync(file, { force: true });
}
