#!/usr/bin/env node
// Adds the lockfile entries of rollup's platform packages that `npm install` leaves out when the
// registry it reaches holds only some platforms' builds (ours serves the Linux ones only): without
// them `npm ci` refuses the lockfile as out of sync. Each entry carries the os/cpu/libc its name
// says, so npm skips it on every other platform without fetching it. Run after changing the
// dependencies: `npm install && node scripts/lock-platforms.mjs`.
import { readFileSync, writeFileSync } from 'node:fs';

const LOCK = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(LOCK, 'utf8'));
const CPUS = { x64: 'x64', arm64: 'arm64', arm: 'arm', ia32: 'ia32', loong64: 'loong64', ppc64: 'ppc64', riscv64: 'riscv64', s390x: 's390x' };

/** os, cpu and libc of a platform package named like `rollup-linux-arm-musleabihf`. */
function platformOf(name) {
  const [, os, cpu, abi = ''] = /^rollup-([a-z0-9]+)-([a-z0-9]+)(?:-([a-z0-9]+))?$/.exec(name) ?? [];
  if (!os || !CPUS[cpu]) return undefined;
  const libc = os === 'linux' ? (abi.startsWith('musl') ? ['musl'] : ['glibc']) : undefined;
  return { cpu: [CPUS[cpu]], ...(libc ? { libc } : {}), os: [os] };
}

let added = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  if (path !== 'node_modules/rollup' && !path.endsWith('/node_modules/rollup')) continue;
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = path.replace(/rollup$/, name);
    const platform = name.startsWith('@rollup/') && platformOf(name.slice('@rollup/'.length));
    if (lock.packages[key] || !platform) continue;
    lock.packages[key] = { version, ...platform, dev: entry.dev, license: 'MIT', optional: true };
    added++;
  }
}
// npm orders the entries by localeCompare('en'); so does this, to change nothing else.
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => a.localeCompare(b, 'en')));
writeFileSync(LOCK, JSON.stringify(lock, null, 2) + '\n');
console.log(`added ${added} platform entr${added === 1 ? 'y' : 'ies'} to package-lock.json`);
