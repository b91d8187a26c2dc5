/**
 * The title of every status the API answers with: its reason phrase (RFC 9110 section 15; 507
 * from RFC 4918). The one place titles are spelled.
 */
const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  409: 'Conflict',
  411: 'Length Required',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  417: 'Expectation Failed',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
  507: 'Insufficient Storage',
};

/** An error with an HTTP status and the `{ title, details }` body the client sees. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly title: string,
    readonly details: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(details);
    this.name = 'HttpError';
  }

  body(): ErrorBody {
    return { title: this.title, details: this.details };
  }
}

export interface ErrorBody {
  title: string;
  details: string;
}

/** The error of a status with its title; a status the table above does not name is titled as a 400 (fastify's rarer 4xx). */
export function httpError(status: number, details: string, headers: Record<string, string> = {}): HttpError {
  return new HttpError(status, TITLES[status] ?? TITLES[400]!, details, headers);
}

// One constructor per status: a route says `throw notFound('gateway "x" does not exist')`.
export const badRequest = (details: string) => httpError(400, details);
export const unauthorized = (details: string) => httpError(401, details);
export const forbidden = (details: string) => httpError(403, details);
export const notFound = (details: string) => httpError(404, details);
export const methodNotAllowed = (details: string, allow: string[]) => httpError(405, details, { allow: allow.join(', ') });
export const requestTimeout = (details: string) => httpError(408, details);
export const conflict = (details: string) => httpError(409, details);
export const payloadTooLarge = (details: string) => httpError(413, details);
export const unsupportedMediaType = (details: string) => httpError(415, details);
export const expectationFailed = (details: string) => httpError(417, details);
/** 429, with Retry-After in whole seconds. */
export const tooManyRequests = (details: string, retryAfterSeconds: number) => httpError(429, details, { 'retry-after': String(retryAfterSeconds) });
export const headersTooLarge = (details: string) => httpError(431, details);
export const internalError = () => httpError(500, 'The server failed to handle the request; the cause is in its log.');
export const notImplemented = (details: string) => httpError(501, details);
/** The database is unreachable or restarting: try again shortly. */
export const serviceUnavailable = (details: string) => httpError(503, details, { 'retry-after': '5' });
/** A request that arrives while the server drains: no Retry-After, the connection closes with it. */
export const shuttingDown = () => httpError(503, 'The server is shutting down: retry in a moment.');
/** The database has no space left for the write (reads still work); it succeeds again once space is freed. */
export const insufficientStorage = (details: string) => httpError(507, details);
