#!/usr/bin/env node
// npm's `prepare`: builds dist/ in a clone (`npm install`, `npm pack`), where the dev dependencies
// are. An install without them (`npm ci --omit=dev` on a server, or the packed tarball, which
// carries dist/ already) has nothing to compile with and nothing to compile: it skips the build.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
if (!existsSync(join(root, 'node_modules', 'typescript'))) {
  const built = existsSync(join(root, 'dist', 'cli', 'main.js'));
  console.error(`scanhub: no dev dependencies here, so no build${built ? ': dist/ is used as it is' : ' and no dist/: run `npm install` with the dev dependencies, then `npm run build`'}`);
  process.exit(built ? 0 : 1);
}
const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
process.exit(build.status ?? 1);
