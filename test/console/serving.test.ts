import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installConventions } from '../../src/server/conventions.js';
import { CONSOLE_CSP, CONSOLE_DIR, registerConsoleRoutes } from '../../src/server/routes/console.js';
import { addSharedSchemas } from '../../src/server/schemas.js';
import { call } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => t.close());

/** The files the built page names (`/assets/...`). */
function assetsOf(page: string): string[] {
  return [...page.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((match) => match[1]!);
}

describe('serving the console', () => {
  it('answers GET / with the built page, under the Content-Security-Policy, without inline script or style', async () => {
    const answer = await call(t.url, 'GET', '/');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(answer.headers['content-security-policy']).toBe(CSP);
    expect(CONSOLE_CSP).toBe(CSP);
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(answer.text).toBe(readFileSync(join(CONSOLE_DIR, 'index.html'), 'utf8'));
    // Every script is a file of the build; no element carries a style or an event handler.
    expect([...answer.text.matchAll(/<script\b[^>]*>/g)].map((m) => m[0])).toEqual([expect.stringMatching(/^<script type="module" src="\/assets\/main-[A-Z0-9]+\.js"><\/script>$|^<script type="module" src="\/assets\/main-[A-Z0-9]+\.js">$/)]);
    expect(answer.text).not.toMatch(/<style|\sstyle=|\son[a-z]+=|https?:\/\//);
  });

  it('serves the files the page names for a year (immutable), with the CSP, and nothing else under /assets/', async () => {
    const page = (await call(t.url, 'GET', '/')).text;
    const files = assetsOf(page);
    expect(files.some((file) => file.endsWith('.js'))).toBe(true);
    expect(files.some((file) => file.endsWith('.css'))).toBe(true);
    for (const file of files) {
      const answer = await call(t.url, 'GET', file);
      expect({ file, status: answer.status, cache: answer.headers['cache-control'], csp: answer.headers['content-security-policy'] }).toEqual({
        file,
        status: 200,
        cache: 'public, max-age=31536000, immutable',
        csp: CSP,
      });
      expect(answer.headers['content-type']).toBe(file.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8');
      expect(answer.text).toBe(readFileSync(join(CONSOLE_DIR, 'assets', file.slice('/assets/'.length)), 'utf8'));
    }
    for (const path of ['/assets/missing-ABC.js', '/assets/metafile.json', '/assets/..%2Findex.html', '/assets/']) {
      const answer = await call(t.url, 'GET', path);
      expect({ path, status: answer.status, body: answer.body }).toEqual({
        path,
        status: 404,
        body: { title: 'Not Found', details: `The console has no file "${decodeURIComponent(path.slice('/assets/'.length))}": reload the page to get the current build's files.` },
      });
    }
  });

  it('answers 404 naming `npm run build` where the console was not built', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'scanhub-console-'));
    const app = Fastify();
    addSharedSchemas(app);
    await installConventions(app);
    registerConsoleRoutes(app, `${empty}/`);
    try {
      const answer = await app.inject({ method: 'GET', url: '/' });
      expect({ status: answer.statusCode, body: answer.json() }).toEqual({
        status: 404,
        body: { title: 'Not Found', details: 'The web console is not built in this installation: run `npm run build` (npm install runs it), then reload the page.' },
      });
    } finally {
      await app.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
