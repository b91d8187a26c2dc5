import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The compiled script of a worker thread, `relative` to the module `from` (its import.meta.url).
 * Node cannot load `.ts` in a worker, so when `from` runs from the TypeScript sources (vitest) the
 * thread runs the build in dist/ instead (`npx tsc -p .` first; `npm test` builds).
 */
export function workerScript(from: string, relative: string): URL {
  const beside = new URL(relative, from);
  if (!from.endsWith('.ts')) return beside;
  const path = fileURLToPath(beside);
  const src = path.lastIndexOf(`${sep(path)}src${sep(path)}`);
  const built = src < 0 ? path : `${path.slice(0, src)}${sep(path)}dist${path.slice(src + 4)}`;
  if (!existsSync(built)) throw new Error(`the worker ${built} is not built: run \`npx tsc -p .\``);
  return pathToFileURL(built);
}

const sep = (path: string) => (path.includes('\\') && !path.includes('/') ? '\\' : '/');
