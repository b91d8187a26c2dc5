// The console's Events page in Debian's chromium (playwright-core) over the data set of the event
// benchmarks (bench/events-data.js: 10 million events, BENCH_EVENTS), served by `scanhub serve`
// started from the CLI: the first page of a range (Show), and `Next page` from the click to the
// next page's rows painted, over a month's range and over a day in its middle. Target (issue 29):
// a next page under 100 ms. bench/README.md "console".
import { chromium } from 'playwright-core';
import { api, median, percentile, report } from './lib.js';
import { CUSTOMER, login, seededDataDir, startServeProcess } from './events-data.js';

const BENCH = 'console-events';
const PAGES = Number(process.env.BENCH_PAGES ?? 100);
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const DAY = 24 * 3600 * 1000;

/** The `datetime-local` text of an instant in this machine's time zone (chromium's too). */
function localInput(at) {
  const d = new Date(at);
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/**
 * In the page: ms from a button's click to the table's new rows painted (its text changed), and
 * of it the request's, from its start to its answer's end.
 */
const CLICK_TO_ROWS = `async (name) => {
  const button = [...document.querySelectorAll('button')].find((b) => b.textContent === name);
  const before = document.querySelector('tbody')?.textContent;
  const started = performance.now();
  button.click();
  await new Promise((resolve) => {
    const done = () => document.querySelector('tbody')?.textContent !== before && !button.disabled && !button.getAttribute('aria-busy');
    if (done()) return resolve();
    new MutationObserver((_, observer) => { if (done()) { observer.disconnect(); resolve(); } }).observe(document, { childList: true, subtree: true, attributes: true });
  });
  await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  const total = performance.now() - started;
  const request = performance.getEntriesByType('resource').filter((e) => e.name.includes('/events?')).at(-1);
  performance.clearResourceTimings();
  return { total, request: request ? request.responseEnd - request.startTime : NaN };
}`;

/** Sets the range and shows its first page; ms from Show to the rows painted. */
async function show(page, start, end) {
  await page.getByLabel('From').fill(localInput(start));
  await page.getByLabel('To').fill(localInput(end));
  return (await page.evaluate(`(${CLICK_TO_ROWS})('Show')`)).total;
}

/** The page's main-thread time so far (ms of tasks run), from the DevTools protocol: what the load of the machine does not stretch. */
async function mainThreadMs(cdp) {
  const { metrics } = await cdp.send('Performance.getMetrics');
  return metrics.find((m) => m.name === 'TaskDuration').value * 1000;
}

/** `count` Next page clicks, each timed: the totals, the requests' part, and the main thread's time per page. */
async function nextPages(page, cdp, count) {
  const times = [];
  const requests = [];
  const before = await mainThreadMs(cdp);
  for (let i = 0; i < count; i++) {
    const { total, request } = await page.evaluate(`(${CLICK_TO_ROWS})('Next page')`);
    times.push(total);
    requests.push(request);
  }
  return { times, requests, mainThread: ((await mainThreadMs(cdp)) - before) / count };
}

const data = await seededDataDir((metric, value, unit) => report(BENCH, metric, value, unit));
const server = await startServeProcess(data.dataDir);
const browser = await chromium.launch({ executablePath: process.env.SCANHUB_TEST_CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
try {
  const token = await login(server.url, data);
  const user = await api(server.url, 'GET', `/${CUSTOMER}/me`, token);
  const session = JSON.stringify({ token, customerId: CUSTOMER, user });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.addInitScript(`sessionStorage.setItem('scanhub.session', ${JSON.stringify(session)})`);
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable');
  const errors = [];
  page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
  await page.goto(`${server.url}/#/events`);
  // The default range (the last day) holds none of the data set's events.
  await page.getByText('No events in this range.').waitFor();
  const events = `${(data.events / 1e6).toLocaleString('en')} M events`;

  const firstMonth = await show(page, data.start, data.end);
  const month = await nextPages(page, cdp, PAGES);
  const middle = data.start + Math.floor((data.end - data.start) / 2 / DAY) * DAY;
  const firstDay = await show(page, middle, middle + DAY);
  const day = await nextPages(page, cdp, PAGES);

  report(BENCH, `Show: first page of a month's range of ${events}`, firstMonth, 'ms');
  report(BENCH, `Show: first page of a day's range in the middle of ${events}`, firstDay, 'ms');
  for (const [what, { times, requests, mainThread }] of [['month', month], ['day', day]]) {
    report(BENCH, `Next page over a ${what}'s range of ${events}, click to rows painted, median of ${times.length}`, median(times), 'ms', 100);
    report(BENCH, `Next page over a ${what}'s range of ${events}, p90 of ${times.length}`, percentile(times, 90), 'ms', 100);
    report(BENCH, `Next page over a ${what}'s range of ${events}, max of ${times.length}`, Math.max(...times), 'ms');
    report(BENCH, `Next page over a ${what}'s range, of it the request (start to answer's end), median`, median(requests), 'ms');
    report(BENCH, `Next page over a ${what}'s range, the page's main-thread time per page (mean)`, mainThread, 'ms');
  }
  report(BENCH, 'console errors in the page', errors.length, 'errors', 0);
  await context.close();
} finally {
  await browser.close();
  await server.stop();
}
