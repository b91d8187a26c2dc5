import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { strictBodyValidators } from '../../src/server/validation.js';
import { call } from '../helpers/http.js';
import { error, scenarioTable, type Scenario, type World } from '../helpers/scenarios.js';
import { CUSTOMER, startTestServer } from '../helpers/server.js';

/** A bare fastify app with the validators of buildApp and one route that uses every part. */
async function appWithProbe() {
  const app = Fastify({
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', allErrors: false } },
    schemaController: strictBodyValidators(),
  });
  app.post('/probe/:n', {
    schema: {
      params: { type: 'object', properties: { n: { type: 'integer' } } },
      querystring: { type: 'object', properties: { limit: { type: 'integer' }, flag: { type: 'boolean' } } },
      headers: { type: 'object', properties: { 'If-Match': { type: 'integer' } }, required: ['If-Match'] },
      body: { type: 'object', properties: { name: { type: 'string' }, count: { type: 'integer' } } },
    },
    handler: async (request) => ({ params: request.params, query: request.query, ifMatch: request.headers['if-match'], body: request.body }),
  });
  await app.ready();
  return app;
}

describe('validators: coerce text parts, never the JSON body', () => {
  it('coerces path, query and header values, which arrive as text', async () => {
    const app = await appWithProbe();
    const reply = await app.inject({ method: 'POST', url: '/probe/7?limit=20&flag=true', headers: { 'if-match': '3' }, payload: { name: 'x', count: 2 } });
    expect(reply.statusCode).toBe(200);
    expect(reply.json()).toEqual({ params: { n: 7 }, query: { limit: 20, flag: true }, ifMatch: 3, body: { name: 'x', count: 2 } });
    await app.close();
  });

  it('a header schema names headers in any case, as with fastify\'s default compiler', async () => {
    const app = await appWithProbe();
    const reply = await app.inject({ method: 'POST', url: '/probe/7', payload: { name: 'x' } });
    expect(reply.statusCode).toBe(400);
    expect(reply.json().message).toBe("headers must have required property 'if-match'");
    await app.close();
  });

  it.each([
    ['a number for a string', { name: 1 }, 'body/name must be string'],
    ['a string for an integer', { count: '2' }, 'body/count must be integer'],
    ['a boolean for a string', { name: true }, 'body/name must be string'],
    ['an array for a string', { name: ['x'] }, 'body/name must be string'],
  ])('refuses %s in the body', async (_name, payload, message) => {
    const app = await appWithProbe();
    const reply = await app.inject({ method: 'POST', url: '/probe/7', headers: { 'if-match': '1' }, payload });
    expect(reply.statusCode).toBe(400);
    expect(reply.json().message).toBe(message);
    await app.close();
  });
});

/** A server with the admin's token and one job configuration (for the body of job-analysis). */
interface NumbersWorld extends World {
  token: string;
  jobConfigId: string;
}

async function numbersWorld(): Promise<NumbersWorld> {
  const t = await startTestServer();
  const gateway = await t.admin.post<{ id: string }>(`/${CUSTOMER}/gateways`, { name: 'numbers', usecase: 'hardening', station: 'bench' });
  const config = await t.admin.post<{ job_config_id: string }>(`/${CUSTOMER}/job-configs`, {
    job_name: 'numbers',
    start_barcode: 'S',
    end_barcode: 'E',
    gateway_ids: [gateway.id],
  });
  return { url: t.url, token: t.adminToken, jobConfigId: config.job_config_id, close: () => t.close() };
}

const bad = (details: string) => error('Bad Request', details);
const LIMIT = Number.MAX_SAFE_INTEGER;

/** Each value that ajv's coercion turned into a number (non-finite ones skip its minimum and maximum). */
const TEXTS = ['Infinity', '-Infinity', '9e999', '1e400', '0x10', '1e2', '%205'];
const decoded = (text: string) => decodeURIComponent(text);

/** The list and export calls with a numeric query parameter, each taking every text above. */
const QUERY_CALLS: [method: string, path: string, parameter: string, kind: string][] = [
  ['GET', `/${CUSTOMER}/users`, 'limit', 'an integer'],
  ['GET', `/${CUSTOMER}/gateways`, 'limit', 'an integer'],
  ['GET', `/${CUSTOMER}/events`, 'limit', 'an integer'],
  ['GET', `/${CUSTOMER}/events`, 'start_time_millis', 'an integer'],
  ['GET', `/${CUSTOMER}/events`, 'end_time_millis', 'an integer'],
  ['GET', `/${CUSTOMER}/events/export`, 'start_time_millis', 'an integer'],
  ['GET', `/${CUSTOMER}/events/export`, 'end_time_millis', 'an integer'],
  ['POST', `/${CUSTOMER}/events/export/tasks`, 'start_time_millis', 'an integer'],
  ['POST', `/${CUSTOMER}/events/export/tasks`, 'end_time_millis', 'an integer'],
];

const analysis = (w: NumbersWorld, start: string, end: string) => `{"job_config_id":"${w.jobConfigId}","start_time":${start},"end_time":${end}}`;

scenarioTable<NumbersWorld>('numbers in requests: finite, exact, in decimal digits (one mechanism for every route)', numbersWorld, [
  ...QUERY_CALLS.flatMap(([method, path, parameter, kind]) =>
    TEXTS.map(
      (text): Scenario<NumbersWorld> => ({
        name: `${method} ${path}?${parameter}=${text}: 400`,
        method,
        path: `${path}?${parameter}=${text}`,
        auth: (w) => `Bearer ${w.token}`,
        status: 400,
        body: bad(`Query parameter "${parameter}" must be ${kind} in decimal digits, not ${JSON.stringify(decoded(text))}.`),
      }),
    ),
  ),
  {
    name: 'a decimal limit still works',
    method: 'GET',
    path: `/${CUSTOMER}/users?limit=007`,
    auth: (w) => `Bearer ${w.token}`,
    status: 200,
  },
]);

describe('numbers in request bodies', () => {
  let world: NumbersWorld;
  beforeAll(async () => {
    world = await numbersWorld();
  });
  afterAll(async () => {
    await world?.close();
  });
  const analyze = (start: string, end: string) =>
    call(world.url, 'POST', `/${CUSTOMER}/job-analysis`, { token: world.token, raw: analysis(world, start, end), contentType: 'application/json' });

  it.each([
    ['2^63', '0', '9223372036854775808', 'end_time', `must be a number between -${LIMIT} and ${LIMIT}, not 9223372036854776000`],
    ['-(2^53)', '-9007199254740992', '0', 'start_time', `must be a number between -${LIMIT} and ${LIMIT}, not -9007199254740992`],
    ['1e400, which JSON.parse reads as Infinity', '1e400', '1', 'start_time', 'must be integer'],
    ['-1e400', '0', '-1e400', 'end_time', 'must be integer'],
  ])('%s: 400 naming the field', async (_name, start, end, field, problem) => {
    const answer = await analyze(start, end);
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 400, body: bad(`Body field "${field}" ${problem}.`) });
  });

  it('exact numbers pass', async () => {
    const answer = await analyze('0', String(LIMIT));
    expect({ status: answer.status, body: answer.body }).toMatchObject({ status: 200 });
  });
});
