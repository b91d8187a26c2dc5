import cors from '@fastify/cors';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { ALLOW_HEADERS, ALLOW_METHODS, EVERY_ANSWER_HEADERS, EXPOSE_HEADERS, PROTECTION_HEADERS, STRICT_TRANSPORT_SECURITY } from './cors.js';
import { StorageFull, StoreUnavailable } from '../store/ports/index.js';
import { HttpError, badRequest, httpError, insufficientStorage, internalError, methodNotAllowed, notFound, serviceUnavailable, shuttingDown } from './errors.js';
import { installServerRefusals } from './http-refusals.js';
import { redactedUrl } from '../domain/log-redaction.js';
import { MAX_DEVICE_TEXT_LENGTH } from '../domain/payload-limits.js';

/**
 * The HTTP conventions (docs/http.md): CORS on every response, OPTIONS everywhere, one error
 * body, 404 and 405, JSON parsing that names what is wrong.
 */
export async function installConventions(app: FastifyInstance, options: { https?: boolean } = {}): Promise<void> {
  await app.register(cors, {
    origin: '*',
    methods: ALLOW_METHODS,
    allowedHeaders: ALLOW_HEADERS,
    exposedHeaders: EXPOSE_HEADERS,
    // Every path answers OPTIONS with 200 and no body, preflight or not.
    strictPreflight: false,
    optionsSuccessStatus: 200,
    hook: 'onRequest',
  });
  // @fastify/cors sets the Allow-Methods/-Headers only on preflights; every answer must carry them.
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('access-control-allow-methods', ALLOW_METHODS);
    reply.header('access-control-allow-headers', ALLOW_HEADERS);
    reply.headers(PROTECTION_HEADERS);
    if (options.https) reply.header('strict-transport-security', STRICT_TRANSPORT_SECURITY);
  });
  installServerRefusals(app);

  const routes = recordRoutes(app);
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0]!;
    const allow = [...new Set(routes.filter((route) => route.pattern.test(path)).map((route) => route.method))];
    const error = allow.length
      ? methodNotAllowed(`${request.method} is not allowed on ${path}; use ${allow.join(', ')}.`, [...allow, 'OPTIONS'])
      : notFound(`No route matches ${request.method} ${path}.`);
    sendError(reply, error);
  });

  refuseBodiesOfBodilessRoutes(app);
  answer503WhileClosing(app);

  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const httpError = toHttpError(error);
    if (httpError.statusCode === 503) request.log.warn({ err: error }, 'request refused: database unavailable');
    // The store logs the full disk once (src/serve/start.ts); each refused request is a line, without a stack.
    else if (httpError.statusCode === 507) request.log.warn({ reason: (error as Error).message }, 'request refused: no space left for the database');
    else if (httpError.statusCode >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.info({ status: httpError.statusCode, details: httpError.details }, 'request refused');
    sendError(reply, httpError);
  });

  // An empty body is no body: clients send Content-Type on body-less POSTs. Anything but JSON is a 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (cause) {
      done(badRequest(`The request body is not valid JSON: ${(cause as Error).message}.`), undefined);
    }
  });
}

/** A route as registered: method, fastify URL (`/:customer_id/users`) and the pattern of paths it serves. */
export interface RegisteredRoute {
  method: string;
  url: string;
  pattern: RegExp;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered after the conventions (the CORS OPTIONS wildcard excepted), HEAD included. */
    registeredRoutes: readonly RegisteredRoute[];
  }
}

/** Collects the routes for the 405 answers (and for tests that check each is documented). */
function recordRoutes(app: FastifyInstance): RegisteredRoute[] {
  const routes: RegisteredRoute[] = [];
  app.decorate('registeredRoutes', routes);
  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.url === '*') return;
    const source = route.url
      .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
      .replace(/:[A-Za-z_][A-Za-z0-9_]*/g, '[^/]+')
      .replace(/\\\*/g, '.*');
    for (const method of [route.method].flat()) routes.push({ method, url: route.url, pattern: new RegExp(`^${source}$`) });
  });
  return routes;
}

/** The methods whose requests may carry a body (parsed, size-limited, refused where the route takes none). */
export const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * A route without a body schema takes no body: fields sent to it are refused like unknown fields
 * anywhere else (docs/http.md "Request bodies": no mass assignment). An empty body or `{}` is no body.
 */
function refuseBodiesOfBodilessRoutes(app: FastifyInstance): void {
  const refuse = async (request: FastifyRequest) => {
    const body = request.body as unknown;
    if (body === undefined) return;
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
      const [field] = Object.keys(body);
      if (field === undefined) return;
      throw badRequest(`Unknown body field "${field}": this call takes no request body.`);
    }
    throw badRequest('This call takes no request body.');
  };
  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.schema?.body !== undefined || ![route.method].flat().some((method) => BODY_METHODS.has(method))) return;
    route.preValidation = [...[route.preValidation ?? []].flat(), refuse];
  });
}

/**
 * While `close()` drains, a request that still arrives on an open keep-alive connection gets a
 * 503 in the usual error body (fastify's own `return503OnClosing` answer has another shape).
 */
function answer503WhileClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (!closing) return;
    reply.header('connection', 'close');
    throw shuttingDown();
  });
}

/** Paths fastify refuses before routing (bad percent-encoding, over-long parameters), in our error body. */
export function frameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  // These answers bypass the hooks, @fastify/cors's included.
  reply.headers(EVERY_ANSWER_HEADERS);
  if (error.code === 'FST_ERR_BAD_URL') {
    request.log.info({ url: redactedUrl(request.raw.url ?? '') }, 'bad url');
    return sendError(reply, badRequest(`The path ${request.raw.url ?? ''} is not a valid URL: check its percent-encoding.`));
  }
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return sendError(reply, badRequest(`A path parameter is longer than ${MAX_PARAM_LENGTH} characters.`));
  }
  request.log.error({ err: error }, 'request failed before routing');
  sendError(reply, internalError());
}

/**
 * The longest path parameter the router accepts (decoded, in characters), stated so the 400 can
 * say it: a scanner's id may be this long (GET /{customer_id}/devices/{device_id}); fastify's own
 * default, 100, would leave the longer ones out of reach.
 */
export const MAX_PARAM_LENGTH = MAX_DEVICE_TEXT_LENGTH;

export function sendError(reply: FastifyReply, error: HttpError): void {
  reply.code(error.statusCode).headers(error.headers).type('application/json; charset=utf-8').send(error.body());
}

const PLACES: Record<string, string> = {
  body: 'body field',
  querystring: 'query parameter',
  params: 'path parameter',
  headers: 'header',
};

/** Maps anything a route or fastify throws onto the error the client sees. */
function toHttpError(error: FastifyError): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof StorageFull) {
    return insufficientStorage(`The database cannot be written: ${error.message}. Reads still work; writes succeed again once space is freed.`);
  }
  if (error instanceof StoreUnavailable) return serviceUnavailable(`The database is unavailable (${error.message}); try again shortly.`);
  if (error.validation) return badRequest(describeValidation(error));
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    const details: Record<string, string> = {
      FST_ERR_CTP_BODY_TOO_LARGE: 'The request body is larger than the limit of 1 MiB.',
      FST_ERR_CTP_INVALID_MEDIA_TYPE: `Content-Type is not supported: send application/json.`,
      FST_ERR_CTP_EMPTY_JSON_BODY: 'The request body is empty: send a JSON object.',
      FST_ERR_CTP_INVALID_JSON_BODY: 'The request body is not valid JSON.',
    };
    return httpError(status, details[error.code] ?? `${error.message}.`);
  }
  return internalError();
}

/** A sentence naming the first offending field, e.g. `body field "email" must match format "email"`. */
function describeValidation(error: FastifyError): string {
  const first = error.validation![0]!;
  const place = PLACES[error.validationContext ?? 'body'] ?? 'field';
  const path = first.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const params = first.params as Record<string, unknown>;
  switch (first.keyword) {
    case 'required':
      return `Missing ${place} "${path ? `${path}.` : ''}${String(params.missingProperty)}".`;
    case 'additionalProperties':
      return `Unknown ${place} "${path ? `${path}.` : ''}${String(params.additionalProperty)}": it is not part of this call.`;
    case 'enum':
      return `${capitalize(place)} "${path}" must be one of ${(params.allowedValues as unknown[]).join(', ')}.`;
    default:
      if (!path) {
        if (error.validationContext !== 'body') return `The ${place}s ${first.message ?? 'are invalid'}.`;
        // A missing body or one of the wrong JSON type (array, string, null).
        if (first.keyword === 'type') return `The request body must be a JSON ${String(params.type)}.`;
        return `The request body ${first.message ?? 'is invalid'}.`;
      }
      return `${capitalize(place)} "${path}" ${first.message ?? 'is invalid'}.`;
  }
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
