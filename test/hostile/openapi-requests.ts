/**
 * Hostile requests built from the served OpenAPI document: for every operation, every numeric
 * and string parameter and every body field gets the values a fuzzer would try. Fixed lists, no
 * randomness: every run sends the same requests in the same order.
 */

type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  format?: string;
  minLength?: number;
  minimum?: number;
  minItems?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
};

interface Document {
  paths: Record<string, Record<string, RawOperation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

interface RawOperation {
  parameters?: { name: string; in: string; schema?: JsonSchema }[];
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, { content?: Record<string, unknown> }>;
  security?: Record<string, string[]>[];
}

/** An operation of the document, as the fuzzer uses it. */
export interface Operation {
  method: string;
  /** The path as the document writes it: `/{customer_id}/users/{user_id}`. */
  path: string;
  parameters: { name: string; in: 'path' | 'query' | 'header'; schema: JsonSchema }[];
  body?: JsonSchema;
  /** The success statuses the document lists (2xx, 3xx). */
  documented: number[];
  /** Whether the operation needs a token (only non-empty security requirements). */
  secured: boolean;
  /** Whether its success is a stream that does not end (Server-Sent Events). */
  streamed: boolean;
}

/** One request of the fuzzer, with a label that says what it tried. */
export interface FuzzRequest {
  label: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  /** The whole Authorization header, instead of the admin's token. */
  authorization?: string;
  raw?: string;
  contentType?: string;
}

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** Every operation of the document (HEAD and OPTIONS, which fastify adds, left out). */
export function operationsOf(document: Document): Operation[] {
  const resolve = (schema: JsonSchema): JsonSchema =>
    schema.$ref ? resolve(document.components?.schemas?.[schema.$ref.split('/').pop()!] ?? {}) : schema;
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([method]) => HTTP_METHODS.includes(method.toUpperCase()))
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        parameters: (operation.parameters ?? []).map((parameter) => ({
          name: parameter.name,
          in: parameter.in as 'path' | 'query' | 'header',
          schema: resolve(parameter.schema ?? {}),
        })),
        body: operation.requestBody?.content['application/json'] ? resolve(operation.requestBody.content['application/json'].schema) : undefined,
        documented: Object.keys(operation.responses).filter((status) => /^[23]\d\d$/.test(status)).map(Number),
        // An empty requirement among the alternatives lets anonymous callers in (GET /metrics from loopback).
        secured: (operation.security ?? []).length > 0 && (operation.security ?? []).every((requirement) => Object.keys(requirement).length > 0),
        streamed: Object.values(operation.responses).some((response) => Boolean(response.content?.['text/event-stream'])),
      })),
  );
}

export const isNumeric = (schema: JsonSchema) => [schema.type].flat().some((type) => type === 'integer' || type === 'number');

/** The numbers of the issue: none of them is a valid count, time or page size. */
export const NUMBER_TEXTS = ['Infinity', '-Infinity', '9e999', '1e400', 'NaN', '1.5', '-1', String(2n ** 63n), '', 'abc', '0x10'];

/** Strings for text parameters, already as they go into a URL (some deliberately badly encoded). */
export const STRING_TEXTS: [label: string, encoded: string][] = [
  ['5,000 characters', 'x'.repeat(5000)],
  ['NUL', '%00'],
  ['a NUL inside', 'a%00b'],
  ['bad percent-encoding', 'a%zz'],
  ['a lone percent sign', '%'],
  ['truncated UTF-8', '%E0%A4%A'],
  ['invalid UTF-8', '%C3%28%FF'],
  ['unicode', encodeURIComponent('ü😀\u202egnp.exe')],
  ['a lone surrogate, encoded as CESU', '%ED%A0%80'],
  ['path traversal', encodeURIComponent('../../../etc/passwd')],
  ['SQL', encodeURIComponent("' OR 1=1 --")],
  ['an encoded slash', 'a%2Fb'],
];

/** Query strings of odd shapes, for operations that take query parameters (`name`: one of theirs). */
export const queryShapes = (name: string): [label: string, query: string][] => [
  ['a parameter given twice', `${name}=1&${name}=2`],
  ['a parameter with brackets', `${name}[]=1`],
  ['a parameter as an object', `${name}[a]=1`],
  ['__proto__', '__proto__=1'],
  ['constructor', 'constructor[prototype][x]=1'],
  ['an unknown parameter', 'fuzz_unknown=1'],
  ['1,000 parameters', Array.from({ length: 1000 }, (_, index) => `p${index}=1`).join('&')],
  ['a parameter without a value', name],
  ['an empty name', '=1'],
];

const base64url = (value: object | string) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/**
 * Page tokens as a client could forge them (they are base64url JSON, not signed): the shape of
 * the events, users and gateways tokens, with extreme times and page sizes.
 */
export function forgedPageTokens(customer: string): [label: string, token: string][] {
  const widest = Number.MAX_SAFE_INTEGER;
  const times = [-widest, -1, 8_640_000_000_000_001, widest];
  return ['events', 'users', 'gateways'].flatMap((kind) => [
    ...times.flatMap((time): [string, string][] => [
      [`${kind} token after ${time}, widest range`, base64url({ kind, customer, after: { created: time, id: '' }, query: { start: -widest, end: widest, limit: 1 } })],
      [`${kind} token after ${time}, range from it`, base64url({ kind, customer, after: { created: time, id: '' }, query: { start: time, end: widest, limit: 500 } })],
    ]),
    [`${kind} token with limit 0`, base64url({ kind, customer, after: { created: 1, id: '' }, query: { start: 0, end: 2, limit: 0 } })],
    [`${kind} token with limit 10^6`, base64url({ kind, customer, after: { created: 1, id: '' }, query: { start: 0, end: 2, limit: 1e6 } })],
    [`${kind} token with an id of 10,000 characters`, base64url({ kind, customer, after: { created: 1, id: 'x'.repeat(10_000) }, query: { start: 0, end: 2, limit: 1 } })],
  ]);
}

/** Authorization header values that are no valid IdToken. */
export const AUTHORIZATION_TEXTS: [label: string, value: string][] = [
  ['Bearer without a token', 'Bearer'],
  ['8,000 characters', `Bearer ${'x'.repeat(8000)}`],
  ['three empty parts', 'Bearer ..'],
  ['alg none', `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({ sub: 'x', customer_id: 'acme', roles: ['ADMIN_ROLE'], exp: 9e15 })}.`],
  ['a payload that is not JSON', `${base64url({ alg: 'ES256', typ: 'JWT' })}.${base64url('not json')}.${base64url('sig')}`],
  ['a header with crit', `${base64url({ alg: 'ES256', crit: ['fuzz'], fuzz: 1 })}.${base64url({ sub: 'x' })}.${base64url('sig')}`],
  ['HS256 with the public key as secret', `${base64url({ alg: 'HS256', typ: 'JWT' })}.${base64url({ sub: 'x', exp: 1e400 })}.${base64url('sig')}`],
  ['Basic credentials', `Basic ${Buffer.from('admin@example.com:admin-password-123').toString('base64')}`],
];

/** Header values a client library lets through (NUL and line breaks go over raw sockets instead). */
export const HEADER_TEXTS = ['x'.repeat(5000), '*', 'W/"1"', '"', '-1', '1e400', 'ü'];

/** Raw JSON texts for one body field. */
export const FIELD_TEXTS = [
  '1e400',
  '-1e400',
  String(2n ** 63n),
  '-1',
  '1.5',
  'null',
  'true',
  '[]',
  '{}',
  '""',
  JSON.stringify('x'.repeat(100_000)),
  JSON.stringify('\u0000'),
  '"\\ud800"',
  JSON.stringify('ü😀\u202e'),
  `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
];

const MiB = 1024 * 1024;

/** Whole bodies of the wrong kind. */
export const BODY_TEXTS: [label: string, raw: string][] = [
  ['an array', '[]'],
  ['a string', '"x"'],
  ['a number', '1'],
  ['null', 'null'],
  ['true', 'true'],
  ['truncated JSON', '{"a":'],
  ['two JSON values', '{}{}'],
  ['a byte-order mark', '\ufeff{}'],
  ['100,000 nested arrays', `${'['.repeat(100_000)}${']'.repeat(100_000)}`],
  ['50,000 nested objects', `${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`],
  ['over 1 MiB', JSON.stringify({ a: 'x'.repeat(MiB) })],
  ['__proto__', '{"__proto__":{"admin":true}}'],
  ['constructor.prototype', '{"constructor":{"prototype":{"admin":true}}}'],
];

export const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=utf-16le',
  'application/jsonx',
  'application/json; charset',
  ';;;',
];

/** A value the schema accepts, with the fixtures' ids for fields that name them. */
export function sample(schema: JsonSchema, name: string, fixtures: Record<string, string>): unknown {
  if (schema.enum) return schema.enum[0];
  const type = [schema.type].flat()[0];
  if (type === 'string') {
    if (fixtures[name] !== undefined) return fixtures[name];
    if (schema.format === 'email') return 'fuzz@example.com';
    return 'fuzz-value'.padEnd(schema.minLength ?? 0, '-');
  }
  if (type === 'integer' || type === 'number') return schema.minimum ?? 0;
  if (type === 'boolean') return false;
  if (type === 'array') {
    if (fixtures[name] !== undefined) return [fixtures[name]];
    return (schema.minItems ?? 0) > 0 && schema.items ? [sample(schema.items, name, fixtures)] : [];
  }
  if (type === 'object') {
    const entries = Object.entries(schema.properties ?? {}).filter(([field]) => schema.required?.includes(field) ?? false);
    return Object.fromEntries(entries.map(([field, property]) => [field, sample(property, field, fixtures)]));
  }
  return 'fuzz-value';
}

/** The object `value` as JSON text with `field` set to the raw JSON text `raw`. */
export function withRawField(value: Record<string, unknown>, field: string, raw: string): string {
  const entries = Object.entries({ ...value, [field]: null }).map(([name, item]) => `${JSON.stringify(name)}:${name === field ? raw : JSON.stringify(item)}`);
  return `{${entries.join(',')}}`;
}

/** The operation's path with its path parameters set (values already URL-encoded) and a query. */
export function pathOf(operation: Operation, pathValues: Record<string, string>, query: Record<string, string> = {}): string {
  const path = operation.path.replace(/\{([^}]+)\}/g, (_whole, name: string) => pathValues[name] ?? 'fuzz');
  const search = Object.entries(query).map(([name, value]) => `${encodeURIComponent(name)}=${value}`);
  return search.length ? `${path}?${search.join('&')}` : path;
}
