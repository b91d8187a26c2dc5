import { readFileSync, readdirSync } from 'node:fs';
import { join, posix, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectRows } from '../helpers/store-rows.js';
import { TEST_STORE } from '../helpers/test-store.js';
import { call, type HttpAnswer } from '../helpers/http.js';
import { error, scenarioTable, type Scenario } from '../helpers/scenarios.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER, startTestServer } from '../helpers/server.js';
import { startFoundation, type Foundation } from '../helpers/world.js';

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE, OPTIONS',
  'access-control-allow-headers': 'Authorization, Content-Type, If-Match, If-None-Match, Last-Event-ID',
};
/** Every answer, error or success: no MIME sniffing, nothing kept by caches (docs/security.md). */
const PROTECTION = { 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' };
const MiB = 1024 * 1024;
const INTERNAL = error('Internal Server Error', 'The server failed to handle the request; the cause is in its log.');

/** The checks every error answer passes: exactly `{ title, details }`, JSON, CORS headers. */
function expectErrorShape(answer: HttpAnswer): void {
  expect(Object.keys(answer.body as object).sort()).toEqual(['details', 'title']);
  const { title, details } = answer.body as { title: unknown; details: unknown };
  expect(typeof title === 'string' && title.length > 0 && typeof details === 'string' && details.length > 0).toBe(true);
  expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(answer.headers).toMatchObject({ ...CORS, ...PROTECTION });
}

const withShape = (answer: HttpAnswer) => expectErrorShape(answer);
/** An invitation of a fresh user without a password (a body-less call that succeeds). */
const invitationPath = async (w: Foundation) => `/${CUSTOMER}/users/${(await w.newInvitee()).id}/invitation`;

const errors: Scenario<Foundation>[] = [
  {
    name: 'unknown route: 404',
    method: 'GET',
    path: '/no/such/route',
    status: 404,
    body: error('Not Found', 'No route matches GET /no/such/route.'),
    check: withShape,
  },
  {
    name: 'wrong method: 405 with an Allow header',
    method: 'PUT',
    path: `/${CUSTOMER}/users`,
    status: 405,
    body: error('Method Not Allowed', `PUT is not allowed on /${CUSTOMER}/users; use POST, GET, HEAD.`),
    check: (answer) => {
      withShape(answer);
      expect(answer.headers.allow).toBe('POST, GET, HEAD, OPTIONS');
    },
  },
  {
    name: 'wrong method on a parameterised path: 405',
    method: 'PUT',
    path: `/${CUSTOMER}/users/some-id`,
    status: 405,
    body: error('Method Not Allowed', `PUT is not allowed on /${CUSTOMER}/users/some-id; use GET, HEAD, PATCH, DELETE.`),
    check: (answer) => expect(answer.headers.allow).toBe('GET, HEAD, PATCH, DELETE, OPTIONS'),
  },
  {
    name: 'wrong method on a wildcard path: 405',
    method: 'DELETE',
    path: '/downloads/exports/x.csv',
    status: 405,
    body: error('Method Not Allowed', 'DELETE is not allowed on /downloads/exports/x.csv; use GET, HEAD.'),
    check: (answer) => expect(answer.headers.allow).toBe('GET, HEAD, OPTIONS'),
  },
  {
    name: 'text/plain body: 415',
    method: 'POST',
    path: '/auth/login',
    raw: 'email=a&password=b',
    contentType: 'text/plain',
    status: 415,
    body: error('Unsupported Media Type', 'Content-Type is not supported: send application/json.'),
    check: withShape,
  },
  {
    name: 'a body without Content-Type: 415',
    method: 'POST',
    path: '/auth/login',
    raw: '{}',
    status: 415,
    body: error('Unsupported Media Type', 'Content-Type is not supported: send application/json.'),
  },
  {
    name: 'body over 1 MiB: 413',
    method: 'POST',
    path: '/auth/login',
    raw: JSON.stringify({ email: 'a@example.com', password: 'x'.repeat(MiB) }),
    contentType: 'application/json',
    status: 413,
    body: error('Payload Too Large', 'The request body is larger than the limit of 1 MiB.'),
    check: withShape,
  },
  {
    name: 'a body of exactly 1 MiB is read (and then judged on its content)',
    method: 'POST',
    path: '/auth/login',
    raw: (() => {
      const frame = JSON.stringify({ email: 'a@example.com', password: '' });
      return JSON.stringify({ email: 'a@example.com', password: 'x'.repeat(MiB - frame.length) });
    })(),
    contentType: 'application/json',
    status: 401,
    body: error('Unauthorized', 'The e-mail address or password is wrong.'),
  },
  {
    name: 'malformed JSON: 400 saying so',
    method: 'POST',
    path: '/auth/login',
    raw: '{"email": ',
    contentType: 'application/json',
    status: 400,
    fields: { title: 'Bad Request', details: expect.stringMatching(/^The request body is not valid JSON: .+\.$/) },
    check: withShape,
  },
  {
    name: 'JSON with a charset parameter is JSON',
    method: 'POST',
    path: '/auth/login',
    raw: '{"email":"nobody@example.com","password":"whatever-it-is"}',
    contentType: 'application/json; charset=utf-8',
    status: 401,
    body: error('Unauthorized', 'The e-mail address or password is wrong.'),
  },
  {
    name: 'an empty JSON body on a body-less call is no body',
    method: 'POST',
    path: invitationPath,
    auth: (w) => `Bearer ${w.admin.token}`,
    raw: '',
    contentType: 'application/json',
    status: 201,
  },
  {
    name: '{} on a body-less call is no body',
    method: 'POST',
    path: invitationPath,
    auth: (w) => `Bearer ${w.admin.token}`,
    json: {},
    status: 201,
  },
  {
    name: 'fields on a body-less call: 400 naming the first',
    method: 'POST',
    path: invitationPath,
    auth: (w) => `Bearer ${w.admin.token}`,
    json: { expires_at: 1 },
    status: 400,
    body: error('Bad Request', 'Unknown body field "expires_at": this call takes no request body.'),
  },
  {
    name: 'an array on a body-less call: 400',
    method: 'POST',
    path: invitationPath,
    auth: (w) => `Bearer ${w.admin.token}`,
    json: [1],
    status: 400,
    body: error('Bad Request', 'This call takes no request body.'),
  },
  {
    name: 'a path with broken percent-encoding: 400 in the usual body, CORS included',
    method: 'GET',
    path: `/${CUSTOMER}/users/%E0%A4%A`,
    status: 400,
    body: error('Bad Request', `The path /${CUSTOMER}/users/%E0%A4%A is not a valid URL: check its percent-encoding.`),
    check: withShape,
  },
  {
    name: 'a path parameter over 256 characters (the longest device id): 400 in the usual body',
    method: 'GET',
    path: `/${CUSTOMER}/users/${'u'.repeat(257)}`,
    status: 400,
    body: error('Bad Request', 'A path parameter is longer than 256 characters.'),
    check: withShape,
  },
  {
    name: 'a validation error: 400 in the usual body',
    method: 'GET',
    path: `/${CUSTOMER}/users?limit=0`,
    auth: (w) => w.admin.token,
    status: 400,
    body: error('Bad Request', 'Query parameter "limit" must be >= 1.'),
    check: withShape,
  },
  {
    name: 'a 401 carries CORS headers',
    method: 'GET',
    path: `/${CUSTOMER}/me`,
    status: 401,
    check: withShape,
  },
  {
    name: 'a 403 carries CORS headers',
    method: 'GET',
    path: `/${CUSTOMER}/users`,
    auth: (w) => w.user.token,
    status: 403,
    check: withShape,
  },
  {
    name: 'a 409 carries CORS headers',
    method: 'DELETE',
    path: (w) => `/globex/users/${w.otherAdmin.id}`,
    auth: (w) => w.otherAdmin.token,
    status: 409,
    check: withShape,
  },
  {
    name: 'a success carries CORS headers',
    method: 'GET',
    path: '/healthz',
    status: 200,
    fields: { status: 'ok', http: 'ok', mqtt: 'ok', database: 'ok', signals: 'ok' },
    check: (answer) => expect(answer.headers).toMatchObject(CORS),
  },
];

const options: Scenario<Foundation>[] = [
  ['a public path', '/auth/login'],
  ['a guarded path, without credentials', `/${CUSTOMER}/users`],
  ['a guarded path of another customer', '/globex/users/anyone'],
  ['an unknown path', '/no/such/thing'],
  ['the root', '/'],
  ['a download link', '/downloads/exports/x.csv'],
].flatMap(([what, path]) =>
  [false, true].map((preflight) => ({
    name: `OPTIONS on ${what}${preflight ? ' (CORS preflight)' : ''}: 200, empty body, CORS headers`,
    method: 'OPTIONS',
    path: path!,
    status: 200,
    check: async (answer: HttpAnswer, w: Foundation) => {
      expect(answer.text).toBe('');
      expect(answer.headers).toMatchObject(CORS);
      if (!preflight) return;
      const preflightAnswer = await call(w.url, 'OPTIONS', path!, {
        headers: { origin: 'https://app.example', 'access-control-request-method': 'DELETE', 'access-control-request-headers': 'authorization' },
      });
      expect({ status: preflightAnswer.status, text: preflightAnswer.text }).toEqual({ status: 200, text: '' });
      expect(preflightAnswer.headers).toMatchObject(CORS);
    },
  })),
);

scenarioTable('HTTP conventions: errors', startFoundation, errors);
scenarioTable('HTTP conventions: OPTIONS', startFoundation, options);

describe('500: the cause goes to the log, never to the client', () => {
  let logs: string[];
  let t: Awaited<ReturnType<typeof startTestServer>>;
  beforeAll(async () => {
    logs = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logs.push(chunk.toString());
        done();
      },
    });
    t = await startTestServer({ logger: { level: 'info', stream } });
  });
  afterAll(() => t.close());

  it('a table the query needs is gone: 500 without SQL; the log has the cause', async () => {
    // A user without a password, whom an invitation is for.
    const user = await t.admin.post<{ id: string }>(`/${CUSTOMER}/users`, { first_name: 'No', last_name: 'Table', role: 'USER_ROLE', email: 'no-table@example.com' });
    await selectRows(t, 'DROP TABLE invitations');
    const answer = await call(t.url, 'POST', `/${CUSTOMER}/users/${user.id}/invitation`, { token: t.adminToken });
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 500, body: INTERNAL });
    expectErrorShape(answer);
    expect(answer.text).not.toMatch(/invitations|sqlite|SQL|at \w+ \(/i);
    const failure = logs.map((line) => JSON.parse(line) as { msg: string; err?: { message: string } }).find((line) => line.msg === 'request failed');
    expect(failure?.err?.message).toBe(TEST_STORE === 'postgres' ? 'relation "invitations" does not exist' : 'no such table: invitations');
  });

  it('the database is closed under the running server: 500 without details; /healthz says 503 and why', async () => {
    // The threads open their own connections: once they run, only the server's connection is closed.
    const { writer, maintenance } = t.server.broker.threads;
    await Promise.all([writer, ...maintenance].map((thread) => thread.reached('running')));
    await t.server.ctx.store.close();
    const answer = await call(t.url, 'GET', `/${CUSTOMER}/me`, { token: t.adminToken });
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 500, body: INTERNAL });
    expectErrorShape(answer);
    const health = await call(t.url, 'GET', '/healthz');
    expect({ status: health.status, body: health.body }).toEqual({
      status: 503,
      body: error(
        'Service Unavailable',
        TEST_STORE === 'postgres'
          ? 'Not ready yet: database (Cannot use a pool after calling end on the pool). Threads: ingest writer running (1 start).'
          : 'Not ready yet: database (the database does not answer: The database connection is not open). Threads: ingest writer running (1 start), checkpointer running (1 start).',
      ),
    });
  });
});

describe('protection headers on answers that carry secrets', () => {
  let t: Awaited<ReturnType<typeof startTestServer>>;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  it('log-in, invitation acceptance, prepare-provisioning, provisioning and API key creation: nosniff and no-store; plain HTTP has no HSTS', async () => {
    const login = await call(t.url, 'POST', '/auth/login', { json: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    const user = await call(t.url, 'POST', `/${CUSTOMER}/users`, { token: t.adminToken, json: { first_name: 'Ada', last_name: 'L', role: 'USER_ROLE', email: 'headers@example.com' } });
    const invitation = await call(t.url, 'POST', `/${CUSTOMER}/users/${(user.body as { id: string }).id}/invitation`, { token: t.adminToken });
    const accepted = await call(t.url, 'POST', '/auth/accept-invitation', {
      json: { invitation_token: (invitation.body as { invitation_token: string }).invitation_token, password: 'headers-password-123' },
    });
    const gateway = await call(t.url, 'POST', `/${CUSTOMER}/gateways`, { token: t.adminToken, json: { name: 'headers-1', usecase: 'u', station: 's' } });
    const prepared = await call(t.url, 'POST', `/${CUSTOMER}/gateways/${(gateway.body as { id: string }).id}/prepare-provisioning`, { token: t.adminToken });
    const provisioned = await call(t.url, 'POST', '/provisioning', { json: { token: (prepared.body as { token: string }).token } });
    const key = await call(t.url, 'POST', `/${CUSTOMER}/api-keys`, { token: t.adminToken, json: { name: 'headers-key' } });
    const answers = { login, invitation, accepted, prepared, provisioned, key };
    expect(Object.fromEntries(Object.entries(answers).map(([name, answer]) => [name, answer.status]))).toEqual({
      login: 200,
      invitation: 201,
      accepted: 200,
      prepared: 200,
      provisioned: 200,
      key: 201,
    });
    for (const answer of Object.values(answers)) {
      expect(answer.headers).toMatchObject(PROTECTION);
      expect(answer.headers['strict-transport-security']).toBeUndefined();
    }
  });
});

describe('/healthz tells why only to those who may read /metrics', () => {
  const METRICS_TOKEN = 'health-reasons-token';
  let t: Awaited<ReturnType<typeof startTestServer>>;
  beforeAll(async () => {
    t = await startTestServer({ metricsToken: METRICS_TOKEN });
  });
  afterAll(() => t.close());

  it('the database closed: 503 naming the part to anyone, its error text only with the metrics token', async () => {
    const { writer, maintenance } = t.server.broker.threads;
    await Promise.all([writer, ...maintenance].map((thread) => thread.reached('running')));
    await t.server.ctx.store.close();
    const threads = TEST_STORE === 'postgres' ? 'ingest writer running (1 start)' : 'ingest writer running (1 start), checkpointer running (1 start)';
    const anonymous = await call(t.url, 'GET', '/healthz');
    expect({ status: anonymous.status, body: anonymous.body }).toEqual({
      status: 503,
      body: error('Service Unavailable', `Not ready yet: database. Threads: ${threads}.`),
    });
    const trusted = await call(t.url, 'GET', '/healthz', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect({ status: trusted.status, body: trusted.body }).toEqual({
      status: 503,
      body: error(
        'Service Unavailable',
        TEST_STORE === 'postgres'
          ? `Not ready yet: database (Cannot use a pool after calling end on the pool). Threads: ${threads}.`
          : `Not ready yet: database (the database does not answer: The database connection is not open). Threads: ${threads}.`,
      ),
    });
  });
});

/** Sends raw HTTP on one socket; `until(text)` resolves once the received text matches. */
function rawExchange(url: string) {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  let data = '';
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  socket.on('data', (chunk: Buffer) => {
    data += chunk.toString();
    for (const waiter of waiters.filter((w) => w.pattern.test(data))) waiter.resolve();
  });
  const received = new Promise<string>((resolve, reject) => {
    socket.on('close', () => resolve(data));
    socket.on('error', reject);
  });
  const until = (pattern: RegExp) =>
    new Promise<void>((resolve, reject) => {
      if (pattern.test(data)) return resolve();
      waiters.push({ pattern, resolve });
      socket.once('close', () => reject(new Error(`connection closed before ${pattern}: ${data}`)));
    });
  return { socket, received, until };
}

/** Whether a new connection to the server is refused (the listener is closed). */
function refused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.on('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', () => resolve(true));
  });
}

describe('shutdown', () => {
  it('drains a request in flight, and answers one that arrives while closing with a 503 in the usual body', async () => {
    const t = await startTestServer();
    const body = JSON.stringify({ email: 'nobody@example.com', password: 'whatever-it-is' });
    const { socket, received, until } = rawExchange(t.url);
    // Request 1 is in flight: headers sent, body not yet. The 100 Continue says the server has
    // routed it (it answers that as it hands the request to fastify).
    socket.write(
      `POST /auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
    );
    await until(/100 Continue\r\n\r\n/);
    const closed = t.close();
    for (let attempt = 0; attempt < 200 && !(await refused(t.url)); attempt++) await new Promise((resolve) => setImmediate(resolve));
    // Request 2 follows on the same keep-alive connection after the listener closed.
    socket.write(body + `GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`);
    const text = await received;
    await closed;
    const answers = text.split(/(?=HTTP\/1\.1 )/);
    expect(answers.map((a) => a.split('\r\n')[0])).toEqual([
      'HTTP/1.1 100 Continue',
      'HTTP/1.1 401 Unauthorized',
      'HTTP/1.1 503 Service Unavailable',
    ]);
    expect(JSON.parse(answers[2]!.slice(answers[2]!.indexOf('\r\n\r\n') + 4))).toEqual(
      error('Service Unavailable', 'The server is shutting down: retry in a moment.'),
    );
  });
});

describe('layers', () => {
  const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
  const sources = (readdirSync(SRC, { recursive: true }) as string[]).filter((file) => file.endsWith('.ts')).map((file) => file.split(sep).join('/'));
  const importsOf = (file: string) =>
    [...readFileSync(join(SRC, file), 'utf8').matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/g)].map(
      (match) => match[1] ?? match[2]!,
    );
  /** Where an import lands, as a path under src/ (or the package name). */
  const target = (file: string, specifier: string) => (specifier.startsWith('.') ? posix.join(posix.dirname(file), specifier) : specifier);

  it('nothing outside src/store/ imports a database driver (pg-copy-streams included) or a store implementation (only ports.ts and shared helpers)', () => {
    const offenders = sources
      .filter((file) => !file.startsWith('store/'))
      .flatMap((file) =>
        importsOf(file)
          .map((specifier) => target(file, specifier))
          .filter((to) => /^(better-sqlite3|pg|pg-copy-streams)(\/|$)/.test(to) || /^store\/(sqlite|postgres)\//.test(to))
          .map((to) => `${file} -> ${to}`),
      );
    expect(offenders).toEqual([]);
  });

  it('events are written by two statements only (SQLite event-rows.ts, PostgreSQL events.ts), whose rows carry a plain_text that ingest or storedValues set', () => {
    // plain_text = 1 lets SQLite write an event's texts without escaping them (store/sqlite/event-json.ts):
    // a statement that stored or changed texts without setting it right would let a device's text into the JSON.
    const writers = sources.filter((file) => /\b(INSERT\s+(OR\s+\w+\s+)?INTO|REPLACE\s+INTO|UPDATE)\s+events\b/i.test(readFileSync(join(SRC, file), 'utf8')));
    expect(writers.sort()).toEqual(['store/postgres/events.ts', 'store/sqlite/event-rows.ts']);
  });

  it('each dialect stays in its folder: sqlite/ never imports postgres/ nor pg, postgres/ never sqlite/ nor better-sqlite3', () => {
    const offenders = sources.flatMap((file) =>
      importsOf(file)
        .map((specifier) => target(file, specifier))
        .filter((to) =>
          file.startsWith('store/sqlite/') ? /^(pg(-copy-streams)?(\/|$)|store\/postgres\/)/.test(to)
          : file.startsWith('store/postgres/') ? /^(better-sqlite3(\/|$)|store\/sqlite\/)/.test(to)
          : file.startsWith('store/') && file !== 'store/open.ts' ? /^(better-sqlite3|pg|pg-copy-streams)(\/|$)/.test(to)
          : false,
        )
        .map((to) => `${file} -> ${to}`),
    );
    expect(offenders).toEqual([]);
  });

  it('imports run down the layers: simulator and client never import cli; store and domain never import server, mqtt, export, retention or cli; domain imports no store', () => {
    const forbidden: [RegExp, RegExp][] = [
      [/^(simulator|client)\//, /^cli\//],
      [/^(store|domain)\//, /^(server|mqtt|export|retention|cli|simulator)\//],
      [/^domain\//, /^store\//],
    ];
    const offenders = sources.flatMap((file) =>
      importsOf(file)
        .map((specifier) => target(file, specifier))
        .filter((to) => forbidden.some(([from, into]) => from.test(file) && into.test(to)))
        .map((to) => `${file} -> ${to}`),
    );
    expect(offenders).toEqual([]);
  });
});
