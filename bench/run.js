#!/usr/bin/env node
// Runs every benchmark (bench/*.bench.js, or those whose name contains an argument) one after
// another, each in its own process so none inherits another's heap or event loop. Each prints
// its figures as JSON lines on stdout: { "bench", "metric", "value", "unit", "target", "pass" }.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const filters = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.js'))
  .filter((f) => filters.length === 0 || filters.some((name) => f.includes(name)))
  .sort();
if (files.length === 0) {
  console.error(`no benchmark matches ${filters.join(', ')}`);
  process.exit(2);
}
let failed = 0;
for (const file of files) {
  const result = spawnSync(process.execPath, ['--expose-gc', join(here, file)], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) {
    failed++;
    console.error(`${file} exited with ${result.status ?? result.signal}`);
  }
}
process.exit(failed ? 1 : 0);
