import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The rules of docs/architecture.md's map, held by a test rather than by review: the rooms each
// folder of src/ may import, the database drivers kept in src/store/, the console bundling no Node
// code, and the size limits of the house.

const ROOT = normalize(join(dirname(fileURLToPath(import.meta.url)), '..'));

/** Each room of src/ and the rooms it may import (docs/architecture.md "The rooms"). */
const MAY_IMPORT: Record<string, string[]> = {
  cli: ['client', 'simulator', 'domain', 'auth', 'pki', 'store', 'serve', 'threads'],
  simulator: ['client', 'pki', 'domain'],
  serve: ['server', 'mqtt', 'webhooks', 'alerts', 'export', 'retention', 'auth', 'pki', 'store', 'threads', 'domain'],
  server: ['export', 'retention', 'auth', 'pki', 'store', 'domain'],
  mqtt: ['store', 'pki', 'threads', 'domain'],
  webhooks: ['store', 'domain'],
  alerts: ['store', 'domain'],
  export: ['store', 'threads', 'domain'],
  retention: ['store', 'domain'],
  auth: ['store', 'domain'],
  pki: ['store', 'domain'],
  client: ['domain'],
  store: ['threads', 'domain'],
  threads: [],
  domain: [],
};

/** Narrower rules inside a room: a path prefix of src/ and the imports only it may make. */
const ONLY_FROM: { target: string; from: string[] }[] = [
  // The CLI reaches the store only to administer a local deployment, and threads only for backups.
  { target: 'src/store/', from: ['src/cli/operator/', 'src/cli/deployment.ts', 'src/cli/serve/', 'src/store/', 'src/serve/', 'src/server/', 'src/mqtt/', 'src/webhooks/', 'src/alerts/', 'src/export/', 'src/retention/', 'src/auth/', 'src/pki/'] },
  { target: 'src/serve/', from: ['src/cli/serve/', 'src/serve/'] },
  { target: 'src/threads/', from: ['src/cli/operator/', 'src/threads/', 'src/serve/', 'src/mqtt/', 'src/export/', 'src/store/'] },
  // Everything outside the store and the composition root sees the store through its ports.
  { target: 'src/store/sqlite/', from: ['src/store/'] },
  { target: 'src/store/postgres/', from: ['src/store/'] },
];

const DRIVERS = ['better-sqlite3', 'pg', 'pg-copy-streams', 'pg-cursor'];

function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
    .sort();
}

interface Import {
  file: string;
  specifier: string;
  typeOnly: boolean;
}

function importsOf(file: string): Import[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const found: Import[] = [];
  for (const match of text.matchAll(/^\s*(?:import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)) {
    found.push({ file, specifier: match[2]!, typeOnly: Boolean(match[1]) });
  }
  return found;
}

/** The repository path an import points at, without its extension, or undefined for a package. */
const targetOf = ({ file, specifier }: Import) =>
  specifier.startsWith('.') ? normalize(join(dirname(file), specifier)).replace(/\.js$/, '') : undefined;

const roomOf = (path: string) => path.split('/')[1]!;

/** A file directly in src/ (the package's version): any room may import it, and it imports nothing of ours. */
const isLeaf = (path: string) => path.split('/').length === 2;

describe('the house (docs/architecture.md)', () => {
  const files = sourceFiles('src');
  const imports = files.flatMap(importsOf);

  it('knows every room of src/', () => {
    const rooms = [...new Set(files.filter((file) => file.split('/').length > 2).map(roomOf))].sort();
    expect(rooms).toEqual(Object.keys(MAY_IMPORT).sort());
  });

  it('imports run down the layers: each room imports only the rooms its row names', () => {
    const faults = imports
      .filter((entry) => targetOf(entry)?.startsWith('src/'))
      .filter((entry) => roomOf(entry.file) !== roomOf(targetOf(entry)!) && !isLeaf(targetOf(entry)!))
      .filter((entry) => !MAY_IMPORT[roomOf(entry.file)]?.includes(roomOf(targetOf(entry)!)))
      .map((entry) => `${entry.file} -> ${entry.specifier}`);
    expect(faults).toEqual([]);
  });

  it('the files directly in src/ are leaves: they import nothing of ours', () => {
    const faults = imports
      .filter((entry) => isLeaf(entry.file) && targetOf(entry)?.startsWith('src/'))
      .map((entry) => `${entry.file} -> ${entry.specifier}`);
    expect(faults).toEqual([]);
  });

  it('the narrower rules hold: the store and the threads from their few callers, a dialect only from the store', () => {
    const faults = imports.flatMap((entry) => {
      const target = targetOf(entry);
      if (!target) return [];
      return ONLY_FROM.filter((rule) => target.startsWith(rule.target) && !rule.from.some((prefix) => entry.file.startsWith(prefix)))
        .filter((rule) => !(entry.typeOnly && rule.target === 'src/store/'))
        .map((rule) => `${entry.file} -> ${entry.specifier} (only ${rule.from.join(', ')} may import ${rule.target})`);
    });
    expect(faults).toEqual([]);
  });

  it('nothing outside src/store/ imports a database driver, and neither dialect imports the other', () => {
    const faults = imports
      .filter((entry) => DRIVERS.includes(entry.specifier) && !entry.file.startsWith('src/store/'))
      .map((entry) => `${entry.file} -> ${entry.specifier}`);
    for (const [dialect, other] of [['sqlite', 'postgres'], ['postgres', 'sqlite']] as const) {
      faults.push(
        ...imports
          .filter((entry) => entry.file.startsWith(`src/store/${dialect}/`))
          .filter((entry) => targetOf(entry)?.startsWith(`src/store/${other}/`) || (dialect === 'sqlite' ? entry.specifier.startsWith('pg') : entry.specifier === 'better-sqlite3'))
          .map((entry) => `${entry.file} -> ${entry.specifier}`),
      );
    }
    expect(faults).toEqual([]);
  });

  it('the console bundles no Node code: types from src/client/, values only from src/domain/ files that need nothing of Node', () => {
    /** A domain file the browser can run: it and what it imports use no Node module and no package. */
    const browserSafe = (target: string, seen = new Set<string>()): boolean => {
      if (seen.has(target)) return true;
      seen.add(target);
      return importsOf(`${target}.ts`).every((entry) => {
        if (entry.typeOnly) return true;
        const next = targetOf(entry);
        return next !== undefined && next.startsWith('src/domain/') && browserSafe(next, seen);
      });
    };
    const faults = sourceFiles('console')
      .flatMap(importsOf)
      .filter((entry) => targetOf(entry)?.startsWith('src/'))
      .filter((entry) => !(entry.typeOnly && targetOf(entry)!.startsWith('src/client/')))
      .filter((entry) => !(targetOf(entry)!.startsWith('src/domain/') && browserSafe(targetOf(entry)!)))
      .map((entry) => `${entry.file} -> ${entry.specifier}`);
    expect(faults).toEqual([]);
  });

  it('no import cycle between files of src/, type imports included', () => {
    const known = new Set(files.map((file) => file.replace(/\.tsx?$/, '')));
    const next = new Map<string, string[]>();
    for (const entry of imports) {
      const target = targetOf(entry);
      const from = entry.file.replace(/\.tsx?$/, '');
      if (target && known.has(target)) next.set(from, [...(next.get(from) ?? []), target]);
    }
    // Tarjan's strongly connected components: any component of more than one file is a cycle.
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const cycles: string[][] = [];
    const visit = (file: string) => {
      index.set(file, index.size);
      low.set(file, index.get(file)!);
      stack.push(file);
      for (const target of next.get(file) ?? []) {
        if (!index.has(target)) {
          visit(target);
          low.set(file, Math.min(low.get(file)!, low.get(target)!));
        } else if (stack.includes(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
      if (low.get(file) === index.get(file)) {
        const component: string[] = [];
        let member: string;
        do component.push((member = stack.pop()!));
        while (member !== file);
        if (component.length > 1) cycles.push(component.sort());
      }
    };
    for (const file of known) if (!index.has(file)) visit(file);
    expect(cycles).toEqual([]);
  });

  it('no function of src/ is longer than 100 lines', () => {
    const long: string[] = [];
    for (const file of files) {
      const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node) => {
        if (ts.isFunctionLike(node) && 'body' in node && node.body) {
          const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
          const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
          if (last - first + 1 > 100) long.push(`${file}:${first + 1}: ${last - first + 1} lines`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(long).toEqual([]);
  });

  it('no file of src/ is longer than 400 lines', () => {
    const long = files
      .map((file) => ({ file, lines: readFileSync(join(ROOT, file), 'utf8').replace(/\n$/, '').split('\n').length }))
      .filter(({ lines }) => lines > 400)
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    expect(long).toEqual([]);
  });
});
