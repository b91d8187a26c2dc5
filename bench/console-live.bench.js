// The console's Live page in Debian's chromium (playwright-core) while gateways publish 500 scans
// a second over MQTT with TLS for 5 minutes (BENCH_SECONDS), against `scanhub serve` started from
// the CLI: the page's JS heap after a full collection at the start and at the end (flat: the list
// is bounded), the scans received and shown against those published, and the age of the newest
// row shown. Targets (issue 29): every scan received, the heap's growth under 1 MB. bench/README.md "console".
import { fork } from 'node:child_process';
import { chromium } from 'playwright-core';
import { api, median, percentile, report } from './lib.js';
import { benchGateways, dropDeployment, login, newDeployment, startServe } from './stores-lib.js';

const BENCH = 'console-live';
const RATE = Number(process.env.BENCH_RATE ?? 500);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 300);
/** Publishing before the heap's first figure: the table fills and the page's code is compiled. */
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 15);
const GATEWAYS = Number(process.env.BENCH_GATEWAYS ?? 10);
const CUSTOMER = 'bench';
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/**
 * In the page, before its scripts: counts the rows added to the Scans table (each scan is a row of
 * its own, keyed by its id, so a row added is a scan shown), and the times the page said it lost
 * the stream. Counters only: nothing kept grows.
 */
const SHOWN_WATCH = `
  window.__shown = 0;
  window.__reconnects = 0;
  new MutationObserver((records) => {
    for (const record of records) {
      if (record.type === 'characterData' && record.target.data === 'Reconnecting…') window.__reconnects++;
      for (const node of record.addedNodes) {
        if (node.nodeName === 'TR' && node.parentNode && node.parentNode.nodeName === 'TBODY' && node.querySelector('th')) window.__shown++;
      }
    }
  }).observe(document, { childList: true, subtree: true, characterData: true });`;

/** The age (ms) of the newest row shown: its scan code is its publish time (`t<epoch ms>`, bench/stream-publisher.js). */
const NEWEST_AGE = `(() => {
  const code = document.querySelector('tbody th')?.textContent ?? '';
  return code.startsWith('t') ? performance.timeOrigin + performance.now() - Number(code.slice(1)) : null;
})()`;

/** The page's JS heap in MB after a full collection (DevTools protocol). */
async function heapMb(cdp) {
  await cdp.send('HeapProfiler.collectGarbage');
  const { usedSize } = await cdp.send('Runtime.getHeapUsage');
  return usedSize / 1024 / 1024;
}

/** A forked helper and its IPC messages, one at a time. */
function child(script) {
  const process_ = fork(new URL(script, import.meta.url), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const messages = [];
  let waiting;
  process_.on('message', (m) => (waiting ? (waiting(m), (waiting = undefined)) : messages.push(m)));
  return { send: (m) => process_.send(m), next: () => (messages.length ? Promise.resolve(messages.shift()) : new Promise((resolve) => (waiting = resolve))), kill: () => process_.kill() };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const deployment = newDeployment('sqlite', undefined, { prefix: 'console-live' });
const server = await startServe(deployment, { customer: CUSTOMER, logLevel: 'warn' });
const browser = await chromium.launch({ executablePath: process.env.SCANHUB_TEST_CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
const publisher = child('./stream-publisher.js');
try {
  const gateways = await benchGateways(deployment, CUSTOMER, GATEWAYS);
  const token = await login(server.url);
  const user = await api(server.url, 'GET', `/${CUSTOMER}/me`, token);
  const session = JSON.stringify({ token, customerId: CUSTOMER, user });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.addInitScript(`sessionStorage.setItem('scanhub.session', ${JSON.stringify(session)}); ${SHOWN_WATCH}`);
  const page = await context.newPage();
  const errors = [];
  page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
  await page.goto(`${server.url}/#/live`);
  await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
  const cdp = await context.newCDPSession(page);
  const idleHeap = await heapMb(cdp);

  publisher.send({ host: '127.0.0.1', port: server.mqttPort, caPem: gateways.ca.certPem, gateways: gateways.list, rate: RATE, eventsPerMessage: 1, window: 256, warmupMs: WARMUP_SECONDS * 1000, durationMs: SECONDS * 1000 });
  const connected = await publisher.next();
  if (connected.type !== 'connected') throw new Error(`publisher: ${JSON.stringify(connected)}`);
  publisher.send('start');
  const done = publisher.next();
  let finished = false;
  void done.then(() => (finished = true));

  await sleep(WARMUP_SECONDS * 1000);
  const startHeap = await heapMb(cdp);
  const heaps = [startHeap];
  const ages = [];
  // A look every second (the age of the newest row), a collected heap every 30 s.
  for (let tick = 1; !finished; tick++) {
    await Promise.race([sleep(1000), done]);
    if (finished) break;
    const age = await page.evaluate(NEWEST_AGE);
    if (age !== null) ages.push(age);
    if (tick % 30 === 0) heaps.push(await heapMb(cdp));
    if (tick % 60 === 0) process.stderr.write(`${BENCH}: ${ages.length} s, newest row ${Math.round(age)} ms old, heap ${heaps.at(-1).toFixed(2)} MB\n`);
  }
  const result = await done;
  // Everything published is acknowledged (stored): the last scans reach the table within a render or two.
  await sleep(1500);
  const endHeap = await heapMb(cdp);
  const shown = await page.evaluate('window.__shown');
  const received = Number(/^([\d,]+) scans? since/.exec(await page.getByText(/since the page opened/).textContent())[1].replaceAll(',', ''));
  const reconnects = await page.evaluate('window.__reconnects');
  const rows = await page.locator('tbody th').count();

  report(BENCH, 'scans published (warm-up included)', result.published, 'scans');
  report(BENCH, 'publish rate over the measured window', (result.publishedInWindow / result.elapsedMs) * 1000, 'scans/s', RATE * 0.98, '>=');
  report(BENCH, 'scans received by the page (its count since it opened)', received, 'scans');
  report(BENCH, 'scans published but not received', result.published - received, 'scans', 0);
  report(BENCH, 'scans shown in the table (each a row once)', shown, 'scans');
  report(BENCH, 'scans received but never on screen (more than a table came between two renders)', received - shown, 'scans');
  report(BENCH, 'rows held by the table at the end', rows, 'rows');
  report(BENCH, 'times the stream was lost (the page said Reconnecting)', reconnects, 'times', 0);
  report(BENCH, 'newest row shown, age at a look each second, median', median(ages), 'ms');
  report(BENCH, 'newest row shown, age at a look each second, p99', percentile(ages, 99), 'ms', 2000);
  report(BENCH, 'page JS heap, idle before publishing (after full GC)', idleHeap, 'MB');
  report(BENCH, `page JS heap at the start, after ${WARMUP_SECONDS} s of publishing (after full GC)`, startHeap, 'MB');
  report(BENCH, `page JS heap at the end, after ${SECONDS} s more (after full GC)`, endHeap, 'MB');
  report(BENCH, 'page JS heap growth, end minus start', endHeap - startHeap, 'MB', 1);
  report(BENCH, 'page JS heap, largest of the 30 s samples (after full GC)', Math.max(...heaps, endHeap), 'MB');
  report(BENCH, 'console errors in the page', errors.length, 'errors', 0);
  await context.close();
} finally {
  publisher.kill();
  await browser.close();
  await server.stop();
  dropDeployment(deployment);
}
