import type { List } from '../../src/client/api';
import { currentSession, endSession } from './session';

/** An error answer of the API: its status and `{ title, details }` (status 0: no answer at all). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly details: string,
  ) {
    super(details);
    this.name = 'ApiError';
  }
}

export interface RequestOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** Without the session's token (signing in, accepting an invitation). */
  anonymous?: boolean;
  /** A token of its own (the one just issued, before the session starts). */
  token?: string;
  signal?: AbortSignal;
}

/** The error of an answer that is not 2xx: the API's `{ title, details }`, or a sentence for anything else. */
async function errorOf(response: Response): Promise<ApiError> {
  const body = (await response.json().catch(() => undefined)) as { title?: string; details?: string } | undefined;
  return new ApiError(
    response.status,
    body?.title ?? `HTTP ${response.status}`,
    body?.details ?? `The server answered ${response.status} ${response.statusText}: try again, or ask the operator to look at its log.`,
  );
}

/**
 * The one fetch wrapper of the console: JSON in and out, the session's IdToken in the
 * Authorization header, errors as ApiError. A 401 on a signed-in call ends the session (expired,
 * or the password or roles changed): the shell then shows the sign-in page.
 */
export async function request<T>(method: string, path: string, options: RequestOptions = {}): Promise<{ body: T; response: Response }> {
  const response = await send(method, path, options);
  const text = await response.text();
  return { body: (text ? JSON.parse(text) : undefined) as T, response };
}

/** The answer of a call as `request` makes it, its body not read yet: for bodies read as they arrive (the live stream). */
export async function send(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  const token = options.token ?? (options.anonymous ? undefined : currentSession()?.token);
  if (token) headers.authorization = `Bearer ${token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body), signal: options.signal });
  } catch (cause) {
    if ((cause as Error).name === 'AbortError') throw cause;
    throw new ApiError(0, 'Network error', 'The server could not be reached: check the connection and try again.');
  }
  if (!response.ok) {
    const error = await errorOf(response);
    if (response.status === 401 && token && token === currentSession()?.token) endSession('expired');
    throw error;
  }
  return response;
}

export const api = {
  get: async <T>(path: string, options?: RequestOptions) => (await request<T>('GET', path, options)).body,
  post: async <T>(path: string, body?: unknown, options?: RequestOptions) => (await request<T>('POST', path, { ...options, body })).body,
  put: async <T>(path: string, body: unknown) => (await request<T>('PUT', path, { body })).body,
  patch: async <T>(path: string, body: unknown, headers?: Record<string, string>) => (await request<T>('PATCH', path, { body, headers })).body,
  delete: async (path: string) => void (await request<unknown>('DELETE', path)),
};

/** A path of the signed-in customer: `customerPath('/gateways')` is `/acme/gateways`. */
export function customerPath(rest: string): string {
  const session = currentSession();
  if (!session) throw new ApiError(401, 'Unauthorized', 'You are signed out: sign in again.');
  return `/${encodeURIComponent(session.customerId)}${rest}`;
}

/** Every item of a list endpoint, page after page (`links.next`). For lists bounded by nature, such as gateways. */
export async function collectAll<T>(path: string): Promise<T[]> {
  const items: T[] = [];
  let next: string | undefined = path;
  while (next) {
    const page: List<T> = await api.get<List<T>>(next);
    items.push(...page.items);
    next = page.links.next;
  }
  return items;
}

/** The sentence to show for a failed call: the API's details, or the error's message. */
export function detailsOf(error: unknown): string {
  return error instanceof ApiError ? error.details : error instanceof Error ? error.message : String(error);
}
