import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { notFound } from '../errors.js';
import { errorResponses } from '../schemas.js';

/**
 * Where `npm run build` puts the console (scripts/build-console.mjs): `index.html` and `assets/`.
 * Three levels up is the package root from both src/server/routes/ and dist/server/routes/.
 */
export const CONSOLE_DIR = fileURLToPath(new URL('../../../dist/console/', import.meta.url));

/**
 * The console's pages load only their own files: no inline script or style, nothing from another
 * origin, not framed (docs/console.md). `data:` images are allowed for pictures the page draws.
 */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

/** Hashed file names change with their content, so a browser may keep them for good. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

const ASSET_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/** The names the build writes (`main-ABC123.js`, `chunk-XYZ.css`): no folders, nothing else. */
const ASSET_NAME = /^[A-Za-z0-9_-]+\.(?:js|css)$/;

const notBuilt = () =>
  notFound('The web console is not built in this installation: run `npm run build` (npm install runs it), then reload the page.');

async function readConsoleFile(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function withConsoleHeaders(reply: FastifyReply): FastifyReply {
  return reply.header('content-security-policy', CONSOLE_CSP);
}

/** `GET /` the console's page and `GET /assets/*` the files it loads (docs/console.md). */
export function registerConsoleRoutes(app: FastifyInstance, dir: string = CONSOLE_DIR): void {
  app.get('/', {
    schema: {
      operationId: 'getConsole',
      summary: 'The web console',
      description: 'The page of the web console (HTML). It signs in with POST /auth/login and then calls this API like any client; it loads its scripts and styles from /assets/.',
      tags: ['console'],
      response: { 200: { description: 'The page', content: { 'text/html': { schema: { type: 'string' } } } }, ...errorResponses },
      refusals: { 404: 'The console is not built in this installation (npm run build).' },
    },
    handler: async (_request, reply) => {
      const page = await readConsoleFile(`${dir}index.html`);
      if (!page) throw notBuilt();
      // The page names the current hashed files: always ask again (the default no-store stays).
      return withConsoleHeaders(reply).type('text/html; charset=utf-8').send(page);
    },
  });

  app.get<{ Params: { '*': string } }>('/assets/*', {
    schema: {
      operationId: 'getConsoleAsset',
      summary: 'A script or style sheet of the web console',
      description: 'The files the console page names, by content-hashed name: cached for a year, since a new build gives them new names.',
      tags: ['console'],
      response: {
        200: {
          description: 'The file',
          content: { 'text/javascript': { schema: { type: 'string' } }, 'text/css': { schema: { type: 'string' } } },
        },
        ...errorResponses,
      },
      refusals: { 404: 'No such file in this build of the console.' },
      wildcard: { name: 'path', description: 'The hashed file name, e.g. main-3FJ2KQ7D.js.' },
    },
    handler: async (request, reply) => {
      const name = request.params['*'];
      const file = ASSET_NAME.test(name) ? await readConsoleFile(`${dir}assets/${name}`) : undefined;
      if (!file) throw notFound(`The console has no file "${name}": reload the page to get the current build's files.`);
      return withConsoleHeaders(reply)
        .header('cache-control', IMMUTABLE)
        .type(ASSET_TYPES[extname(name)]!)
        .send(file);
    },
  });
}
