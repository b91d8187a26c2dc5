// The web console in Debian's chromium (playwright-core), against `scanhub serve` started from
// the CLI with 2,000 gateways: first load to an interactive Gateways board, the board's render
// with 2,000 gateways, and each search keystroke; then the bytes each page loads, gzipped, from
// the build's metafile. Targets (issue 29): < 1 s, < 300 ms, < 50 ms a keystroke, <= 150 KB.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { api, freePort, median, report, terminate } from './lib.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'scanhub.js');
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const GATEWAYS = Number(process.env.CONSOLE_BENCH_GATEWAYS ?? 2000);
const LOADS = Number(process.env.CONSOLE_BENCH_LOADS ?? 5);
const PASSWORD = 'bench-password-123';
const BENCH = 'console';

/** Starts `scanhub serve` on a fresh data directory; resolves once /healthz answers 200. */
async function startServe(dataDir) {
  const [port, mqttPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', dataDir, '--port', String(port), '--mqtt-port', String(mqttPort)], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, SCANHUB_ADMIN_PASSWORD: PASSWORD, SCANHUB_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const url = `http://127.0.0.1:${port}`;
  for (let tries = 0; ; tries++) {
    if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode}: ${stderr}`);
    const ok = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
    if (ok) return { child, url };
    if (tries > 1000) throw new Error(`serve did not become ready: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** In the page, before its scripts: the time (ms since navigation start) the board first has 50 rows and a focusable search box. */
const BOARD_WATCH = `
  window.__board = new Promise((resolve) => {
    const ready = () => {
      const search = document.querySelector('input[type=search]');
      if (document.querySelectorAll('table tbody tr').length < 50 || !search) return false;
      search.focus();
      return document.activeElement === search;
    };
    new MutationObserver((_, observer) => {
      if (ready()) { observer.disconnect(); resolve(performance.now()); }
    }).observe(document, { childList: true, subtree: true });
  });`;

/** Milliseconds from leaving the board (hash change) to its 50 rows shown again, fetching the 2,000 gateways included. */
const BOARD_AGAIN = `(async () => {
  location.hash = '#/scanners';
  // Away once the Scanners page is shown (its own table may follow; a table alone does not tell).
  await new Promise((resolve) => { const wait = () => document.querySelector('h1')?.textContent === 'Scanners' ? resolve() : requestAnimationFrame(wait); wait(); });
  const started = performance.now();
  location.hash = '#/gateways';
  await new Promise((resolve) => {
    const done = () => document.querySelectorAll('table tbody tr').length >= 50;
    if (done()) return resolve();
    new MutationObserver((_, observer) => { if (done()) { observer.disconnect(); resolve(); } }).observe(document, { childList: true, subtree: true });
  });
  // ...and painted: the frame after the rows arrived.
  await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  return performance.now() - started;
})()`;

/** Milliseconds per keystroke typed into the search box: from the input event to the next frame painted. */
const KEYSTROKES = `(async () => {
  const input = document.querySelector('input[type=search]');
  const times = [];
  const type = async (value) => {
    const started = performance.now();
    input.value = value;
    input.dispatchEvent(new Event('input', { bubbles: true }));
    await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
    times.push(performance.now() - started);
  };
  for (const query of ['aisle 1234', 'station-77', 'picking 19']) {
    for (let i = 1; i <= query.length; i++) await type(query.slice(0, i));
    for (let i = query.length - 1; i >= 0; i--) await type(query.slice(0, i));
  }
  return times;
})()`;

/** A lazily loaded chunk by its source: `gateways-page` for a page, the package's name for a library (`qrcode`). */
const chunkName = (entryPoint) =>
  entryPoint.startsWith('node_modules/') ? entryPoint.split('/')[1] : basename(entryPoint).replace(/\.tsx?$/, '');

/** Gzipped bytes of each output file, and the files each output imports statically (from esbuild's metafile). */
function pageSizes() {
  const meta = JSON.parse(readFileSync(join(ROOT, 'dist', 'console', 'metafile.json'), 'utf8'));
  const gz = (path) => gzipSync(readFileSync(join(ROOT, path))).length;
  const closure = (path, seen = new Set()) => {
    if (seen.has(path)) return seen;
    seen.add(path);
    const output = meta.outputs[path];
    if (output.cssBundle) seen.add(output.cssBundle);
    for (const imported of output.imports) if (imported.kind === 'import-statement') closure(imported.path, seen);
    return seen;
  };
  const size = (paths) => [...paths].reduce((sum, path) => sum + gz(path), 0) / 1024;
  const [mainPath] = Object.entries(meta.outputs).find(([, output]) => output.entryPoint === 'console/main.tsx');
  const shell = closure(mainPath);
  const pages = Object.entries(meta.outputs)
    .filter(([, output]) => output.entryPoint && output.entryPoint !== 'console/main.tsx')
    .map(([path, output]) => ({ page: chunkName(output.entryPoint), own: [...closure(path)].filter((p) => !shell.has(p)) }));
  return { shell: size(shell), pages: pages.map(({ page, own }) => ({ page, kb: size(own) })) };
}

const dataDir = mkdtempSync(join(tmpdir(), 'scanhub-console-bench-'));
const { child, url } = await startServe(dataDir);
const browser = await chromium.launch({ executablePath: process.env.SCANHUB_TEST_CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
try {
  const login = await api(url, 'POST', '/auth/login', undefined, { email: 'admin@localhost', password: PASSWORD });
  const customer = login.customer_id;
  for (let i = 0; i < GATEWAYS; i += 500) {
    const gateways = Array.from({ length: Math.min(500, GATEWAYS - i) }, (_, j) => ({
      name: `Aisle ${i + j + 1}`,
      usecase: (i + j) % 3 ? 'picking' : 'packing',
      station: `station-${(i + j) % 97}`,
    }));
    await api(url, 'POST', `/${customer}/gateways/bulk-create`, login.id_token, { gateways });
  }
  const user = await api(url, 'GET', `/${customer}/me`, login.id_token);
  const session = JSON.stringify({ token: login.id_token, customerId: customer, user });

  // First load: a fresh context each time (nothing cached), signed in as the tab would be after a reload.
  const loads = [];
  for (let i = 0; i < LOADS; i++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addInitScript(`sessionStorage.setItem('scanhub.session', ${JSON.stringify(session)}); ${BOARD_WATCH}`);
    const page = await context.newPage();
    await page.goto(`${url}/#/gateways`);
    loads.push(await page.evaluate('window.__board'));
    if (i === LOADS - 1) {
      const renders = [];
      for (let j = 0; j < 5; j++) renders.push(await page.evaluate(BOARD_AGAIN));
      report(BENCH, `board of ${GATEWAYS} gateways shown again (fetch and render), median of 5`, median(renders), 'ms', 300);
      report(BENCH, `board of ${GATEWAYS} gateways shown again, max of 5`, Math.max(...renders), 'ms');
      const keystrokes = await page.evaluate(KEYSTROKES);
      report(BENCH, `search keystroke over ${GATEWAYS} gateways to the next frame, median of ${keystrokes.length}`, median(keystrokes), 'ms', 50);
      report(BENCH, `search keystroke over ${GATEWAYS} gateways to the next frame, max of ${keystrokes.length}`, Math.max(...keystrokes), 'ms', 50);
    }
    await context.close();
  }
  report(BENCH, `first load to an interactive board of ${GATEWAYS} gateways, median of ${LOADS}`, median(loads), 'ms', 1000);
  report(BENCH, `first load to an interactive board, max of ${LOADS}`, Math.max(...loads), 'ms', 1000);

  const sizes = pageSizes();
  const board = sizes.pages.find((p) => p.page === 'gateways-page');
  report(BENCH, 'first page (shell, sign-in, style sheet, Gateways board) gzipped', sizes.shell + board.kb, 'KB', 150);
  report(BENCH, 'shell with sign-in and style sheet gzipped', sizes.shell, 'KB');
  for (const { page, kb } of sizes.pages) report(BENCH, `${page} chunk (loaded with it) and what only it imports, gzipped`, kb, 'KB');
} finally {
  await browser.close();
  await terminate(child);
  rmSync(dataDir, { recursive: true, force: true });
}
