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

// One constructor per status: a route says `throw notFound('gateway "x" does not exist')`.
export const badRequest = (details: string) => new HttpError(400, 'Bad Request', details);
export const unauthorized = (details: string) => new HttpError(401, 'Unauthorized', details);
export const forbidden = (details: string) => new HttpError(403, 'Forbidden', details);
export const notFound = (details: string) => new HttpError(404, 'Not Found', details);
export const methodNotAllowed = (details: string, allow: string[]) =>
  new HttpError(405, 'Method Not Allowed', details, { allow: allow.join(', ') });
export const requestTimeout = (details: string) => new HttpError(408, 'Request Timeout', details);
export const conflict = (details: string) => new HttpError(409, 'Conflict', details);
export const payloadTooLarge = (details: string) => new HttpError(413, 'Payload Too Large', details);
export const unsupportedMediaType = (details: string) => new HttpError(415, 'Unsupported Media Type', details);
export const expectationFailed = (details: string) => new HttpError(417, 'Expectation Failed', details);
export const headersTooLarge = (details: string) => new HttpError(431, 'Request Header Fields Too Large', details);
export const internalError = () =>
  new HttpError(500, 'Internal Server Error', 'The server failed to handle the request; the cause is in its log.');
/** The database is unreachable or restarting: try again shortly. */
export const serviceUnavailable = (details: string) => new HttpError(503, 'Service Unavailable', details, { 'retry-after': '5' });
/** The database has no space left for the write (reads still work); it succeeds again once space is freed. */
export const insufficientStorage = (details: string) => new HttpError(507, 'Insufficient Storage', details);
export const notImplemented = (details: string) => new HttpError(501, 'Not Implemented', details);
