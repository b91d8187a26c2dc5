import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type CallOptions } from '../helpers/http.js';
import { rawHttp } from '../helpers/raw-http.js';
import { RAW_REQUESTS } from './raw-requests.js';
import { CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';
import {
  BODY_TEXTS,
  CONTENT_TYPES,
  FIELD_TEXTS,
  HEADER_TEXTS,
  AUTHORIZATION_TEXTS,
  HTTP_METHODS,
  NUMBER_TEXTS,
  STRING_TEXTS,
  forgedPageTokens,
  isNumeric,
  operationsOf,
  pathOf,
  queryShapes,
  sample,
  withRawField,
  type FuzzRequest,
  type Operation,
} from './openapi-requests.js';

/**
 * An HTTP fuzzer over every operation of the served /openapi.json, as an authenticated
 * administrator: each answer must be a documented success or a 4xx whose body is exactly
 * `{ title, details }` (two strings), never a 500 (issue 12).
 */

let t: TestServer;
let operations: Operation[];
/** Values of path parameters and body fields that name existing things, so requests reach the handlers. */
let fixtures: Record<string, string>;

beforeAll(async () => {
  t = await startTestServer();
  const document = (await call(t.url, 'GET', '/openapi.json')).body as Parameters<typeof operationsOf>[0];
  operations = operationsOf(document);
  const gateway = await t.admin.post<{ id: string }>(`/${CUSTOMER}/gateways`, { name: 'fuzz-gateway', usecase: 'fuzz', station: 'fuzz' });
  const user = await t.admin.post<{ id: string }>(`/${CUSTOMER}/users`, { first_name: 'Fuzz', last_name: 'Target', role: 'USER_ROLE', email: 'fuzz-target@example.com' });
  const config = await t.admin.post<{ job_config_id: string }>(`/${CUSTOMER}/job-configs`, {
    job_name: 'fuzz',
    start_barcode: 'S',
    end_barcode: 'E',
    gateway_ids: [gateway.id],
  });
  const task = await t.admin.post<{ task: string }>(`/${CUSTOMER}/events/export/tasks`);
  fixtures = {
    customer_id: CUSTOMER,
    gateway_id: gateway.id,
    gateway_ids: gateway.id,
    user_id: user.id,
    job_config_id: config.job_config_id,
    task: task.task,
  };
});

afterAll(async () => {
  await t?.close();
});

interface Finding {
  request: string;
  status: number;
  body: string;
}

/** Sends the requests one after the other and returns every answer that breaks the rules. */
async function findings(requests: (FuzzRequest & { operation: Operation; expect?: (status: number, body: unknown) => boolean })[]) {
  const found: Finding[] = [];
  for (const request of requests) {
    const options: CallOptions = {
      token: t.adminToken,
      authorization: request.authorization,
      headers: request.headers,
      raw: request.raw,
      contentType: request.contentType,
      // The live event stream answers 200 and never ends: its headers are the answer.
      headersOfStreams: request.operation.streamed,
    };
    const answer = await call(t.url, request.method, request.path, options);
    const shapeOk =
      answer.status < 400
        ? request.operation.documented.includes(answer.status)
        : answer.status < 500 &&
          String(answer.headers['content-type']).startsWith('application/json') &&
          hasErrorShape(answer.body) &&
          answer.headers['access-control-allow-origin'] === '*';
    if (!shapeOk || (request.expect && !request.expect(answer.status, answer.body))) {
      found.push({ request: `${request.label}: ${request.method} ${request.path.slice(0, 120)}`, status: answer.status, body: answer.text.slice(0, 200) });
    }
  }
  return found;
}

function hasErrorShape(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const keys = Object.keys(body).sort();
  const { title, details } = body as Record<string, unknown>;
  return keys.join() === 'details,title' && typeof title === 'string' && typeof details === 'string' && title !== '' && details !== '';
}

const encodedFixtures = () => Object.fromEntries(Object.entries(fixtures).map(([name, value]) => [name, encodeURIComponent(value)]));

describe('HTTP fuzzer over every operation of /openapi.json', () => {
  it('reads a document with the operations it fuzzes', () => {
    expect(operations.length).toBeGreaterThanOrEqual(30);
    expect(operations.some((operation) => operation.parameters.some((parameter) => isNumeric(parameter.schema)))).toBe(true);
  });

  it('numeric query and path parameters: every non-finite, non-decimal or out-of-range value, and a fraction for an integer, is a 400 naming the parameter', async () => {
    const requests = operations.flatMap((operation) =>
      operation.parameters
        .filter((parameter) => parameter.in !== 'header' && isNumeric(parameter.schema))
        .flatMap((parameter) =>
          // A fraction is a value of a `number` parameter (battery_below=87.75), only not of an integer one.
          NUMBER_TEXTS.filter((text) => !(text === '1.5' && (parameter.schema as { type?: unknown }).type === 'number')).map((text) => {
            const encoded = encodeURIComponent(text);
            const pathValues = { ...encodedFixtures(), ...(parameter.in === 'path' ? { [parameter.name]: encoded } : {}) };
            return {
              operation,
              label: `${parameter.name}=${text}`,
              method: operation.method,
              path: pathOf(operation, pathValues, parameter.in === 'query' ? { [parameter.name]: encoded } : {}),
              expect: (status: number, body: unknown) => status === 400 && String((body as { details?: string }).details).includes(`"${parameter.name}"`),
            };
          }),
        ),
    );
    expect(requests.length).toBeGreaterThanOrEqual(NUMBER_TEXTS.length * 9);
    expect(await findings(requests)).toEqual([]);
  });

  it('string parameters: long, NUL, bad percent-encoding, unicode, traversal', async () => {
    const requests = operations.flatMap((operation) =>
      operation.parameters
        .filter((parameter) => !isNumeric(parameter.schema))
        .flatMap((parameter) => {
          if (parameter.in === 'header') {
            return HEADER_TEXTS.map((text) => ({
              operation,
              label: `header ${parameter.name}: ${text.slice(0, 20)}`,
              method: operation.method,
              path: pathOf(operation, encodedFixtures()),
              headers: { [parameter.name]: text },
            }));
          }
          return STRING_TEXTS.map(([label, encoded]) => ({
            operation,
            label: `${parameter.name}: ${label}`,
            method: operation.method,
            path: pathOf(
              operation,
              { ...encodedFixtures(), ...(parameter.in === 'path' ? { [parameter.name]: encoded } : {}) },
              parameter.in === 'query' ? { [parameter.name]: encoded } : {},
            ),
          }));
        }),
    );
    expect(await findings(requests)).toEqual([]);
  });

  it('bodies: each field of the wrong type, size or depth; whole bodies of the wrong kind; wrong content types', async () => {
    // Deletions last: they would take the fixtures away from the operations after them.
    const deletionsLast = [...operations].sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
    const requests = deletionsLast
      .filter((operation) => operation.method !== 'GET')
      .flatMap((operation) => {
        const valid = (operation.body ? sample(operation.body, '', fixtures) : {}) as Record<string, unknown>;
        const path = pathOf(operation, encodedFixtures());
        const json = (label: string, raw: string, contentType = 'application/json') => ({ operation, label, method: operation.method, path, raw, contentType });
        return [
          ...Object.keys(operation.body?.properties ?? {}).flatMap((field) =>
            FIELD_TEXTS.map((text) => json(`body field ${field}: ${text.slice(0, 20)}`, withRawField(valid, field, text))),
          ),
          json('an unknown field', JSON.stringify({ ...valid, fuzz_unknown: 1 })),
          ...BODY_TEXTS.map(([label, raw]) => json(`body: ${label}`, raw)),
          ...CONTENT_TYPES.map((contentType) => json(`content type ${contentType}`, JSON.stringify(valid), contentType)),
        ];
      });
    expect(await findings(requests)).toEqual([]);
  });

  it('page tokens forged with extreme times and sizes', async () => {
    const requests = operations.flatMap((operation) =>
      operation.parameters
        .filter((parameter) => parameter.in === 'query' && /^next_(token|key)$/.test(parameter.name))
        .flatMap((parameter) =>
          forgedPageTokens(CUSTOMER).map(([label, token]) => ({
            operation,
            label: `${parameter.name}: ${label}`,
            method: operation.method,
            path: pathOf(operation, encodedFixtures(), { [parameter.name]: token }),
          })),
        ),
    );
    expect(requests.length).toBeGreaterThanOrEqual(forgedPageTokens(CUSTOMER).length * 3);
    expect(await findings(requests)).toEqual([]);
  });

  it('query strings of odd shapes: repeated, bracketed, prototype names, a thousand parameters', async () => {
    const requests = operations.flatMap((operation) => {
      const query = operation.parameters.find((parameter) => parameter.in === 'query');
      if (!query) return [];
      const path = pathOf(operation, encodedFixtures());
      return queryShapes(query.name).map(([label, search]) => ({ operation, label, method: operation.method, path: `${path}?${search}` }));
    });
    expect(requests.length).toBeGreaterThan(0);
    expect(await findings(requests)).toEqual([]);
  });

  it('Authorization headers that carry no valid IdToken: 401 wherever a token is needed', async () => {
    const requests = operations.flatMap((operation) =>
      AUTHORIZATION_TEXTS.map(([label, authorization]) => ({
        operation,
        label: `Authorization: ${label}`,
        method: operation.method,
        path: pathOf(operation, encodedFixtures()),
        authorization,
        expect: (status: number) => !operation.secured || status === 401,
      })),
    );
    expect(requests.filter((request) => request.operation.secured).length).toBeGreaterThanOrEqual(AUTHORIZATION_TEXTS.length * 20);
    expect(await findings(requests)).toEqual([]);
  });

  it('methods a path does not have: 405 in the error body', async () => {
    // The methods of a concrete path are those of every template it matches (/gateways/bulk-create is also /gateways/{gateway_id}).
    const templateOf = (operation: Operation) => new RegExp(`^${operation.path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    const paths = [...new Set(operations.map((operation) => pathOf(operation, encodedFixtures())))];
    const requests = paths.flatMap((path) => {
      const known = operations.filter((operation) => templateOf(operation).test(path));
      return HTTP_METHODS.filter((method) => !known.some((operation) => operation.method === method)).map((method) => ({
        operation: { ...known[0]!, documented: [] },
        label: `${method} on a path without it`,
        method,
        path,
        expect: (status: number) => status === 405,
      }));
    });
    expect(requests.length).toBeGreaterThan(0);
    expect(await findings(requests)).toEqual([]);
  });
});

describe('raw malformed requests over a socket: the status, the error body and CORS, and the server keeps serving', () => {
  it.each(RAW_REQUESTS)('%s', async (_name, request, statusLine, details) => {
    const answer = await rawHttp(t.url, request());
    expect(answer.statusLine).toBe(statusLine);
    expect(hasErrorShape(answer.body)).toBe(true);
    expect(answer.body).toMatchObject({ title: statusLine.split(' ').slice(2).join(' '), details: expect.stringMatching(details) });
    expect(answer.headers).toMatchObject({ 'content-type': 'application/json; charset=utf-8', 'access-control-allow-origin': '*' });
    expect((await call(t.url, 'GET', '/healthz')).status).toBe(200);
  });
});
