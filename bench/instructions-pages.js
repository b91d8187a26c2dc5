// Not a benchmark (no .bench.js): instructions per 500-event page of `scanhub serve`, counted by
// callgrind, which does not depend on the machine's load, so that two builds can be compared on a
// busy machine; instrumentation is on only for the measured pages (bench/README.md, "Tools that are
// not benchmarks"). Usage: node bench/instructions-pages.js [root of a build, default this checkout]
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LeanHttpClient } from './http-client.js';
import { login, mixedPagePath, seededDataDir } from './events-data.js';
import { terminate } from './lib.js';

const root = process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url));
const pages = Number(process.env.PAGES ?? 300);
const warmup = Number(process.env.WARMUP ?? 300);
const limit = Number(process.env.LIMIT ?? 500);
const out = process.env.CALLGRIND_DIR ?? '/tmp/scanhub-callgrind';

const data = await seededDataDir();
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const child = spawn(
  'valgrind',
  ['--tool=callgrind', '--smc-check=all-non-file', '--instr-atstart=no', `--callgrind-out-file=${out}/callgrind.%p`,
    process.execPath, join(root, 'bin/scanhub.js'), 'serve', '--data-dir', data.dataDir, '--port', '0', '--mqtt-port', '0'],
  { env: { ...process.env, SCANHUB_LOG_LEVEL: process.env.SCANHUB_LOG_LEVEL ?? 'info' }, stdio: ['ignore', 'ignore', 'pipe'] },
);
const url = await new Promise((resolve, reject) => {
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
    const match = /serving (http:\/\/\S+?) \(/.exec(stderr);
    if (match) resolve(match[1]);
  });
  child.on('exit', (code) => reject(new Error(`serve under valgrind exited with ${code}: ${stderr.slice(-2000)}`)));
});
const control = (...args) => execFileSync('callgrind_control', [...args, String(child.pid)], { stdio: 'pipe' });
const client = await LeanHttpClient.connect(url);
try {
  const headers = { authorization: `Bearer ${await login(url, data)}` };
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  let next;
  for (let i = 0; i < warmup + pages; i++) {
    if (i === warmup) control('--instr=on');
    const path = mixedPagePath(data, i, next, random).replace('limit=500', `limit=${limit}`);
    const response = await client.get(path, headers);
    if (response.status !== 200) throw new Error(`${path}: ${response.status} ${response.tail}`);
    next = /"links":\{"next":"([^"]+)"\}/.exec(response.tail)?.[1];
  }
  control('--instr=off');
  control('--dump');
} finally {
  client.close();
  await terminate(child);
}
let total = 0;
for (const file of readdirSync(out)) {
  const annotated = execFileSync('callgrind_annotate', [join(out, file)], { maxBuffer: 1 << 30 }).toString();
  total += Number(/([\d,]+) +\(100\.0%\) +PROGRAM TOTALS/.exec(annotated)?.[1].replace(/,/g, '') ?? 0);
}
console.log(JSON.stringify({ bench: 'instructions-pages', root, limit, pages, instructions_per_page: Math.round(total / pages) }));
