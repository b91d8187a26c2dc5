#!/usr/bin/env node
// Bundles the web console (console/, TypeScript + preact) into dist/console/: hashed, minified
// ES modules in assets/, one chunk per page (a page's heavy library loads with that page only),
// and index.html naming the entry's files. `npm run build` runs it after tsc (docs/console.md).
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'console');
const ENTRY = 'console/main.tsx';

// A build leaves no file of the one before: the page names only this build's files.
rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'assets'), { recursive: true });

const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: [ENTRY],
  outdir: join(out, 'assets'),
  bundle: true,
  format: 'esm',
  splitting: true,
  minify: true,
  platform: 'browser',
  target: ['es2022', 'chrome110', 'firefox110', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  entryNames: '[name]-[hash]',
  chunkNames: 'chunk-[hash]',
  assetNames: '[name]-[hash]',
  metafile: true,
  logLevel: 'warning',
});

const outputs = Object.entries(result.metafile.outputs);
const [entryFile, entry] = outputs.find(([, output]) => output.entryPoint === ENTRY) ?? [];
if (!entryFile || !entry) throw new Error(`esbuild wrote no output for ${ENTRY}`);
const asset = (file) => `/assets/${basename(file)}`;
// The chunks the entry imports statically: fetched at once rather than after the entry is parsed.
const preloads = entry.imports.filter((i) => i.kind === 'import-statement').map((i) => `<link rel="modulepreload" href="${asset(i.path)}">`);

// No inline script or style: the Content-Security-Policy of src/server/routes/console.ts forbids both.
const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>scanhub</title>
<link rel="icon" href="data:,">
${entry.cssBundle ? `<link rel="stylesheet" href="${asset(entry.cssBundle)}">\n` : ''}<script type="module" src="${asset(entryFile)}"></script>
${preloads.join('\n')}
</head>
<body>
<noscript>The scanhub console needs JavaScript.</noscript>
<div id="app"></div>
</body>
</html>
`;
writeFileSync(join(out, 'index.html'), page);
// For the bench and reviewers: which file holds what, and what imports what (not served).
writeFileSync(join(out, 'metafile.json'), JSON.stringify(result.metafile));
