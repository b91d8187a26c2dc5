import { createReadStream, statSync } from 'node:fs';
import { basename, extname, join, normalize } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { checkLink, signedLinkPath } from '../../domain/signed-links.js';
import type { ServerContext } from '../context.js';
import { forbidden, notFound } from '../errors.js';
import { errorResponses } from '../schemas.js';

/** The data-directory folders whose files may be handed out through signed links. */
const SERVED_FOLDERS = ['exports', 'assets', 'packages'];

const CONTENT_TYPES: Record<string, string> = {
  '.csv': 'text/csv; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.apk': 'application/vnd.android.package-archive',
  '.zip': 'application/zip',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * An absolute signed link to a file of the data directory, e.g. `exports/<task>.csv`,
 * valid `lifetimeMs` from now. The one way exports, assets and provisioning packages are served.
 */
export function signDownloadLink(ctx: ServerContext, path: string, lifetimeMs: number): string {
  return ctx.config.publicUrl + signedLinkPath(ctx.linkKey, path, ctx.clock() + lifetimeMs);
}

/**
 * `attachment` with an ASCII fallback name (a header value outside Latin-1 would make Node throw)
 * and the exact name in RFC 5987 form for clients that read it.
 */
export function contentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/** The 200 of the OpenAPI document: a file in any of the types above (streamed, never serialized). */
const fileContent = Object.fromEntries(
  [...new Set([...Object.values(CONTENT_TYPES), 'application/octet-stream'])].map((type) => [type.split(';')[0]!, { schema: { type: 'string', format: 'binary' } }]),
);

function isServable(path: string): boolean {
  const clean = normalize(path);
  return clean === path && !clean.startsWith('..') && SERVED_FOLDERS.includes(clean.split('/')[0]!) && clean.split('/').length >= 2;
}

/** `GET /downloads/*`: streams the file a valid signed link names; 403 when expired or altered. */
export function registerDownloadRoutes(app: FastifyInstance, ctx: ServerContext): void {
  app.get<{ Params: { '*': string }; Querystring: { expires?: string; signature?: string } }>('/downloads/*', {
    schema: {
      operationId: 'downloadFile',
      summary: 'Download a file through a signed, expiring link',
      description:
        'Follow the link as the API gave it: path, expires and signature belong together and any change invalidates it. Needs no IdToken: the signature authorizes the call.',
      tags: ['downloads'],
      querystring: {
        type: 'object',
        properties: { expires: { type: 'string' }, signature: { type: 'string' } },
      },
      response: { 200: { description: 'The file', content: fileContent }, ...errorResponses },
      refusals: { 403: 'The link has expired, or was altered or is incomplete.', 404: 'The file of the link is no longer kept.' },
      wildcard: { name: 'path', description: 'The file in the data directory, e.g. exports/<task>.csv; its "/" may be sent as is or as %2F.' },
    },
    handler: async (request, reply) => {
      const path = request.params['*'];
      const check = checkLink(ctx.linkKey, path, request.query.expires, request.query.signature, ctx.clock());
      if (check === 'expired') throw forbidden('This download link has expired: request a new one.');
      if (check === 'invalid' || !isServable(path)) throw forbidden('This download link is not valid: it was altered or is incomplete.');
      const file = join(ctx.config.blobDir, path);
      let size: number;
      try {
        const stat = statSync(file);
        if (!stat.isFile()) throw new Error('not a file');
        size = stat.size;
      } catch {
        throw notFound('The file of this link no longer exists: files are kept for a limited time.');
      }
      const name = basename(path);
      return reply
        .header('content-type', CONTENT_TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream')
        .header('content-length', size)
        .header('content-disposition', contentDisposition(name))
        .header('cache-control', 'private, no-store')
        .send(createReadStream(file));
    },
  });
}
