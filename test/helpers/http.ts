import { request, type Dispatcher } from 'undici';

/** One HTTP answer as a client sees it: status, headers, raw text and the parsed JSON (if any). */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: unknown;
}

export interface CallOptions {
  /** The IdToken, sent as `Bearer <token>`. */
  token?: string;
  /** The raw Authorization header value (bare token, `Basic ...`); wins over `token`. */
  authorization?: string;
  /** A JSON body (sent with Content-Type application/json). */
  json?: unknown;
  /** A body sent as is, with `contentType` (if given). */
  raw?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
  /** Who connects (an undici Agent trusting a CA for HTTPS); the global dispatcher without. */
  dispatcher?: Dispatcher;
  /** An event stream (text/event-stream) is closed once its headers arrived: its text is then empty. */
  headersOfStreams?: boolean;
}

/**
 * Sends one request and returns whatever came back, errors included (ApiClient throws on them;
 * scenario tests want to look at the error bodies).
 */
export async function call(baseUrl: string, method: string, path: string, options: CallOptions = {}): Promise<HttpAnswer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  else if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | Buffer | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = options.contentType ?? 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.raw !== undefined) {
    if (options.contentType) headers['content-type'] = options.contentType;
    body = options.raw;
  }
  const response = await request(baseUrl + path, { method: method as 'GET', headers, body, dispatcher: options.dispatcher });
  if (options.headersOfStreams && String(response.headers['content-type']).startsWith('text/event-stream')) {
    response.body.destroy();
    return { status: response.statusCode, headers: response.headers, text: '', body: undefined };
  }
  const text = await response.body.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.statusCode, headers: response.headers, text, body: parsed };
}
