// The cost of a log line of `serve --log-format pretty` against `json` in the server's thread, with
// the logger `serve` builds (src/cli/serve/log.ts serveLogger) writing synchronously to /dev/null,
// so the figure is formatting and the write call, not a terminal (bench/README.md "log-format").
import { openSync } from 'node:fs';
import { pino } from 'pino';
import { serveLogger } from '../dist/cli/serve/log.js';
import { percentile, report } from './lib.js';

const BENCH = 'log-format';
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const LINES = Number(process.env.BENCH_LINES ?? 50_000);
const devNull = openSync('/dev/null', 'w');

/** serve's logger for the format, its destination (stdout in serve) /dev/null, written synchronously. */
async function logger(format) {
  const { options } = await serveLogger(format, 'info', false, { fd: devNull, sync: true });
  return pino(options, options.stream);
}

/** µs per line of LINES "gateway connected" lines. */
function microsPerLine(log) {
  const child = log.child({ component: 'mqtt' });
  const started = process.hrtime.bigint();
  for (let i = 0; i < LINES; i++) child.info({ gateway_id: '0b7e3a52-5f0e-4a7d-9c61-3b1f2d4e5a01', remote: '10.1.2.3' }, 'gateway connected');
  return Number(process.hrtime.bigint() - started) / LINES / 1000;
}

const loggers = { json: await logger('json'), pretty: await logger('pretty') };
const runs = { json: [], pretty: [] };
for (let run = 0; run < RUNS; run++) for (const format of ['json', 'pretty']) runs[format].push(microsPerLine(loggers[format]));
for (const format of ['json', 'pretty']) report(BENCH, `${format}_us_per_line_median`, percentile(runs[format], 50), 'µs');
report(BENCH, 'ratio_pretty_to_json', percentile(runs.pretty, 50) / percentile(runs.json, 50), 'x');
console.error(`${BENCH}: json [${runs.json.map((v) => v.toFixed(1)).join(', ')}] µs, pretty [${runs.pretty.map((v) => v.toFixed(1)).join(', ')}] µs`);
