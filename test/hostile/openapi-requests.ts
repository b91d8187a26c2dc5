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
  responses: Record<string, unknown>;
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
}

/** One request of the fuzzer, with a label that says what it tried. */
export interface FuzzRequest {
  label: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
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
