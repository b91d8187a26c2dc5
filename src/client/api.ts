import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';

/** An error answer of the API: its status and `{ title, details }` body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly details: string,
    readonly method: string,
    readonly path: string,
  ) {
    super(`${method} ${path}: ${status} ${title}: ${details}`);
    this.name = 'ApiError';
  }
}

/** The deployment could not be reached at all. */
export class NetworkError extends Error {
  constructor(
    readonly baseUrl: string,
    cause: unknown,
  ) {
    super(`cannot reach ${baseUrl}: ${(cause as NodeJS.ErrnoException).code ?? (cause as Error).message}`, { cause });
    this.name = 'NetworkError';
  }
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  /** Skip the Authorization header (login, provisioning). */
  anonymous?: boolean;
}

export interface ApiResponse<T> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
}

/** TLS verification errors of a certificate chain that ends in a CA the client does not trust. */
const UNTRUSTED_CODES = new Set(['SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY']);

/** Whether a request failed because the deployment's certificate chain is not trusted; its code when so. */
export function untrustedCertificate(error: unknown): string | undefined {
  const code = ((error instanceof NetworkError ? error.cause : error) as NodeJS.ErrnoException | undefined)?.code;
  return code && UNTRUSTED_CODES.has(code) ? code : undefined;
}

// undici is loaded on the first request: `scanhub serve` and commands that fail before calling
// the API (usage errors, operator commands) then never pay for it.
let undici: typeof import('undici') | undefined;
const agents = new Map<string, import('undici').Agent>();
async function httpRequest(url: URL, options: { method: 'GET'; headers?: Record<string, string>; body?: string; signal?: AbortSignal }, ca: string | undefined) {
  undici ??= await import('undici');
  let dispatcher: import('undici').Agent | undefined;
  if (ca) {
    const { rootCertificates } = await import('node:tls');
    dispatcher = agents.get(ca);
    // The deployment's CA beside the system's: a public certificate keeps verifying.
    if (!dispatcher) agents.set(ca, (dispatcher = new undici.Agent({ connect: { ca: [...rootCertificates, ca] } })));
  }
  return undici.request(url, { ...options, dispatcher });
}

/** How the client connects: the CA (PEM) an HTTPS deployment's certificate chains to, when not a public one. */
export interface ClientOptions {
  ca?: string;
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);
const RETRY_TRIES = 3;
const RETRY_BUDGET_MS = 30_000;

/** The wait a Retry-After header asks for (RFC 9110 section 10.2.3: seconds, or an HTTP date), or undefined. */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Typed HTTP client of any scanhub deployment (undici), used by the CLI, the simulator and tests. */
export class ApiClient {
  readonly baseUrl: string;

  /** The CA trusted beside the system's (`--ca-cert`), if any. */
  readonly ca: string | undefined;

  constructor(
    baseUrl: string,
    readonly token?: string,
    options: ClientOptions = {},
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.ca = options.ca;
  }

  /** Sends the request; resolves with 2xx answers, throws ApiError or NetworkError otherwise. */
  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const url = new URL(this.baseUrl + path);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (this.token && !options.anonymous) headers.authorization = `Bearer ${this.token}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    const response = await this.send(url, method, headers, body);
    const text = await response.body.text();
    const parsed = text && String(response.headers['content-type'] ?? '').includes('json') ? safeJson(text) : text;
    if (response.statusCode >= 400) {
      const error = (parsed ?? {}) as { title?: string; details?: string };
      throw new ApiError(
        response.statusCode,
        error.title ?? `HTTP ${response.statusCode}`,
        error.details ?? (typeof parsed === 'string' ? parsed : ''),
        method,
        path,
      );
    }
    return { status: response.statusCode, headers: response.headers, body: parsed as T };
  }

  /**
   * One request; a safe one (GET, HEAD) answered 429 or 503 with Retry-After is sent again after
   * the wait it names: at most RETRY_TRIES tries and RETRY_BUDGET_MS of waiting in all (DESIGN
   * "CLI conventions"). Anything else is the caller's to handle.
   */
  private async send(url: URL, method: string, headers: Record<string, string>, body: string | undefined) {
    let waited = 0;
    for (let attempt = 1; ; attempt++) {
      let response;
      try {
        response = await httpRequest(url, { method: method as 'GET', headers, body }, this.ca);
      } catch (cause) {
        throw new NetworkError(this.baseUrl, cause);
      }
      const wait = retryAfterMs(response.headers['retry-after']);
      const retry = SAFE_METHODS.has(method) && (response.statusCode === 429 || response.statusCode === 503) && wait !== undefined;
      if (!retry || attempt >= RETRY_TRIES || waited + wait > RETRY_BUDGET_MS) return response;
      await response.body.dump();
      await new Promise((done) => setTimeout(done, wait));
      waited += wait;
    }
  }

  async get<T>(path: string, query?: RequestOptions['query']): Promise<T> {
    return (await this.request<T>('GET', path, { query })).body;
  }

  async post<T>(path: string, body?: unknown, query?: RequestOptions['query']): Promise<T> {
    return (await this.request<T>('POST', path, { body, query })).body;
  }

  async put<T>(path: string, body: unknown): Promise<T> {
    return (await this.request<T>('PUT', path, { body })).body;
  }

  async patch<T>(path: string, body: unknown, headers?: Record<string, string>): Promise<T> {
    return (await this.request<T>('PATCH', path, { body, headers })).body;
  }

  async delete(path: string): Promise<void> {
    await this.request('DELETE', path);
  }

  /**
   * Opens a response that goes on (the live event stream): resolves with its body once a 2xx
   * answered, throws ApiError or NetworkError otherwise. `signal` aborts it.
   */
  async openStream(
    path: string,
    options: { query?: RequestOptions['query']; headers?: Record<string, string>; signal?: AbortSignal } = {},
  ): Promise<AsyncIterable<Buffer>> {
    const url = new URL(this.baseUrl + path);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const headers: Record<string, string> = { ...options.headers };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    let response;
    try {
      response = await httpRequest(url, { method: 'GET', headers, signal: options.signal }, this.ca);
    } catch (cause) {
      throw new NetworkError(this.baseUrl, cause);
    }
    if (response.statusCode >= 300) {
      const parsed = safeJson(await response.body.text()) as { title?: string; details?: string } | undefined;
      throw new ApiError(response.statusCode, parsed?.title ?? `HTTP ${response.statusCode}`, parsed?.details ?? '', 'GET', path);
    }
    return response.body;
  }

  /** Streams an absolute or relative URL to a file; reports bytes received and the total when known. */
  async download(link: string, file: string, onProgress?: (received: number, total: number | undefined) => void): Promise<number> {
    const url = new URL(link, this.baseUrl + '/');
    let response;
    try {
      response = await httpRequest(url, { method: 'GET' }, this.ca);
    } catch (cause) {
      throw new NetworkError(this.baseUrl, cause);
    }
    if (response.statusCode >= 400) {
      const parsed = safeJson(await response.body.text()) as { title?: string; details?: string } | undefined;
      throw new ApiError(response.statusCode, parsed?.title ?? `HTTP ${response.statusCode}`, parsed?.details ?? '', 'GET', url.pathname);
    }
    const total = Number(response.headers['content-length']) || undefined;
    let received = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        received += chunk.length;
        onProgress?.(received, total);
        callback(null, chunk);
      },
    });
    await pipeline(response.body, counter, createWriteStream(file));
    return received;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Percent-encodes one path segment. */
export const seg = (value: string) => encodeURIComponent(value);

/** A page of a list endpoint (docs/http.md "Lists"): its items and the link to the next page. */
export interface List<T> {
  items: T[];
  links: { next?: string };
}

/** A client bound to one customer: `base` is `/{customer}` percent-encoded, the prefix of its paths. */
export interface CustomerApi {
  client: ApiClient;
  base: string;
}

/** The page that `next`, a page's `links.next`, names. */
export function nextPage<P extends { links: { next?: string } }>(client: ApiClient, next: string): Promise<P> {
  return client.get<P>(next);
}

/** Every item of a list endpoint, following `links.next` until the last page. */
export async function collectAll<T>(client: ApiClient, path: string, query?: Record<string, string | number | undefined>): Promise<T[]> {
  const items: T[] = [];
  let page = await client.get<List<T>>(path, query);
  items.push(...page.items);
  while (page.links.next) {
    page = await nextPage<List<T>>(client, page.links.next);
    items.push(...page.items);
  }
  return items;
}
