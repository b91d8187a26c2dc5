// GET /{customer}/events over 10 M stored events, through HTTP to a real `scanhub serve`
// (bench/README.md "events"): 500-event pages taken by a lean client, in rounds that alternate with
// a bare node:http server answering as many bytes (the machine's floor: the target is on the ratio
// of the two p99s), pages from the newest, and one gateway's month streamed with the RSS sampled.
import { spawn } from 'node:child_process';
import { Client } from 'undici';
import { LeanHttpClient } from './http-client.js';
import { percentile, report } from './lib.js';
import { CUSTOMER, diskReadKb, login, mixedPagePath, rssMb, seededDataDir, startServeProcess } from './events-data.js';

const BENCH = 'events';
const samples = Number(process.env.BENCH_SAMPLES ?? 600);
const warmup = Number(process.env.BENCH_WARMUP ?? 100);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);

/** A bare node:http process answering a body of the size it is told, in its own process. */
class BareServer {
  static async start() {
    const script = `let body = Buffer.alloc(0);
      const server = require('node:http').createServer((request, response) => {
        if (request.url.startsWith('/size/')) body = Buffer.alloc(Number(request.url.slice(6)), 97);
        response.end(body);
      });
      server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const port = await new Promise((resolve, reject) => {
      child.stdout.once('data', (chunk) => resolve(Number(String(chunk).trim())));
      child.once('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
    });
    return new BareServer(child, await LeanHttpClient.connect(`http://127.0.0.1:${port}`));
  }

  constructor(child, client) {
    this.child = child;
    this.client = client;
  }

  /** Latencies of `warmup + samples` sequential GETs of `bytes` bytes, the warm-up dropped. */
  async latencies(bytes) {
    await this.client.get(`/size/${bytes}`);
    const latencies = [];
    for (let i = 0; i < warmup + samples; i++) {
      const started = performance.now();
      const response = await this.client.get('/');
      if (response.length !== bytes) throw new Error(`bare server sent ${response.length} bytes`);
      if (i >= warmup) latencies.push(performance.now() - started);
    }
    return latencies;
  }

  stop() {
    this.client.close();
    this.child.kill();
  }
}

const data = await seededDataDir((metric, value, unit) => report(BENCH, metric, value, unit));
report(BENCH, 'events_stored', data.events, 'events');
// The server's own time per request (fastify's responseTime: request received to response
// handed to the socket), from its log: the part of the latency that is scanhub's.
const serverTimes = [];
let whenLogged;
const server = await startServeProcess(data.dataDir, (log) => {
  if (log.responseTime === undefined) return;
  serverTimes.push(log.responseTime);
  if (whenLogged && serverTimes.length >= whenLogged.count) whenLogged.resolve();
});
/** Resolves once the server has logged `count` responses (its log lines trail the responses). */
const logged = (count) =>
  serverTimes.length >= count ? Promise.resolve() : new Promise((resolve) => (whenLogged = { count, resolve }));
const client = new Client(server.url, { pipelining: 1 });
const lean = await LeanHttpClient.connect(server.url);
try {
  const token = await login(server.url, data);
  const headers = { authorization: `Bearer ${token}` };

  // The body is counted as it arrives, not parsed: parsing 170 KB a page would make the client's
  // own garbage collector part of the figures. The tail holds links and metadata, which are checked.
  const getPage = async (path) => {
    const started = performance.now();
    const response = await lean.get(path, headers);
    const ms = performance.now() - started;
    if (response.status !== 200) throw new Error(`${path}: ${response.status} ${response.tail}`);
    const size = /"metadata":\{.*"size":(\d+)/.exec(response.tail)?.[1];
    if (size !== '500') throw new Error(`${path}: page of ${size} items`);
    return { ms, bytes: response.length, next: /"links":\{"next":"([^"]+)"\}/.exec(response.tail)?.[1] };
  };

  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  // The login, then one log line per page, in order.
  let logLines = 1;
  /** `warmup` then `samples` pages at random places (two in three follow links.next): client latencies, the server's own times, bytes. */
  const randomPages = async () => {
    const latencies = [];
    let pageBytes = 0;
    let readKb;
    let next;
    for (let i = 0; i < warmup + samples; i++) {
      const page = await getPage(mixedPagePath(data, i, next, random));
      next = page.next;
      if (i === warmup - 1) readKb = diskReadKb();
      if (i >= warmup) latencies.push(page.ms);
      pageBytes = Math.max(pageBytes, page.bytes);
    }
    readKb = diskReadKb() - readKb;
    await logged(logLines + warmup + samples);
    const serverPageTimes = serverTimes.slice(logLines + warmup, logLines + warmup + samples);
    logLines += warmup + samples;
    return { latencies, serverPageTimes, pageBytes, readKb };
  };

  // Rounds: scanhub's pages, then the bare server answering as many bytes (the machine's floor for
  // such an exchange: a bare node:http process answering from memory, asked by the same client the
  // same way), so that both meet the same moments of a busy machine.
  const bare = await BareServer.start();
  const perRound = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      const pages = await randomPages();
      const floor = await bare.latencies(pages.pageBytes);
      const figures = {
        p50: percentile(pages.latencies, 50),
        p99: percentile(pages.latencies, 99),
        server_p50: percentile(pages.serverPageTimes, 50),
        server_p99: percentile(pages.serverPageTimes, 99),
        bare_p50: percentile(floor, 50),
        bare_p99: percentile(floor, 99),
      };
      figures.ratio = figures.p99 / figures.bare_p99;
      perRound.push(figures);
      report(BENCH, `round_${round}_page_500_p50`, figures.p50, 'ms');
      report(BENCH, `round_${round}_page_500_p99`, figures.p99, 'ms');
      report(BENCH, `round_${round}_page_500_server_time_p50`, figures.server_p50, 'ms');
      report(BENCH, `round_${round}_page_500_server_time_p99`, figures.server_p99, 'ms');
      report(BENCH, `round_${round}_bare_http_same_bytes_p50`, figures.bare_p50, 'ms');
      report(BENCH, `round_${round}_bare_http_same_bytes_p99`, figures.bare_p99, 'ms');
      report(BENCH, `round_${round}_page_500_p99_over_bare`, figures.ratio, 'x');
      report(BENCH, `round_${round}_page_500_disk_read`, pages.readKb, 'KB');
    }
  } finally {
    bare.stop();
  }
  // Medians of the rounds (the rounds' own lines above give the spread).
  const median = (key) => percentile(perRound.map((figures) => figures[key]), 50);
  report(BENCH, 'page_500_samples', samples * rounds, 'requests');
  report(BENCH, 'page_500_p50', median('p50'), 'ms');
  report(BENCH, 'page_500_p99', median('p99'), 'ms');
  report(BENCH, 'page_500_server_time_p50', median('server_p50'), 'ms', 1, '<=');
  report(BENCH, 'page_500_server_time_p99', median('server_p99'), 'ms');
  report(BENCH, 'bare_http_same_bytes_p50', median('bare_p50'), 'ms');
  report(BENCH, 'bare_http_same_bytes_p99', median('bare_p99'), 'ms');
  report(BENCH, 'page_500_p99_over_bare', median('ratio'), 'x', 1.5, '<=');

  // One whole page, parsed, to check what the counted ones carried.
  const sample = await (await client.request({ method: 'GET', path: `/${CUSTOMER}/events?start_time_millis=${data.start}&end_time_millis=${data.end}&limit=500`, headers })).body.json();
  if (sample.items.length !== 500 || typeof sample.items[499].id !== 'string') throw new Error('a parsed page lacks its 500 events');
  logLines++;
  // A client paging through the month from its newest event, as `scanhub events list --all` does.
  const paging = [];
  let path = `/${CUSTOMER}/events?start_time_millis=${data.start}&end_time_millis=${data.end}&limit=500`;
  for (let i = 0; i < warmup + samples; i++) {
    const page = await getPage(path);
    if (i >= warmup) paging.push(page.ms);
    path = page.next;
  }
  // Log lines so far: the login, the rounds' pages, the parsed page, this warm-up.
  const pagingFrom = logLines + warmup;
  await logged(pagingFrom + samples);
  const serverPagingTimes = serverTimes.slice(pagingFrom, pagingFrom + samples);
  report(BENCH, 'paging_from_newest_p50', percentile(paging, 50), 'ms');
  report(BENCH, 'paging_from_newest_p99', percentile(paging, 99), 'ms');
  report(BENCH, 'paging_from_newest_server_time_p50', percentile(serverPagingTimes, 50), 'ms');
  report(BENCH, 'paging_from_newest_server_time_p99', percentile(serverPagingTimes, 99), 'ms');

  // One gateway's month in one streamed response: count bytes as they come, sample the server's RSS.
  const gateway = data.gateways[0];
  const rssBefore = rssMb(server.pid);
  let rssMax = rssBefore;
  const sampler = setInterval(() => (rssMax = Math.max(rssMax, rssMb(server.pid))), 20);
  const started = performance.now();
  const response = await client.request({
    method: 'GET',
    path: `/${CUSTOMER}/events?gateway_id=${gateway}&start_time_millis=${data.start}&end_time_millis=${data.end}`,
    headers,
  });
  let bytes = 0;
  let tail = '';
  for await (const chunk of response.body) {
    bytes += chunk.length;
    tail = (tail + chunk.toString()).slice(-300);
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  const size = Number(/"size":(\d+)/.exec(tail)[1]);
  if (size !== data.events / 20) throw new Error(`gateway stream had ${size} events, expected ${data.events / 20}`);
  report(BENCH, 'gateway_stream_events', size, 'events');
  report(BENCH, 'gateway_stream_rate', size / seconds, 'events/s');
  report(BENCH, 'gateway_stream_mb', bytes / 1024 / 1024, 'MB');
  report(BENCH, 'gateway_stream_server_rss_before', rssBefore, 'MB');
  report(BENCH, 'gateway_stream_server_rss_max', rssMax, 'MB', 300, '<=');
} finally {
  lean.close();
  await client.close();
  await server.stop();
}
