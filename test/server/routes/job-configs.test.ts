import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../../src/client/api.js';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';
import { call } from '../../helpers/http.js';
import { insertCustomer, insertGateway } from '../../helpers/store-rows.js';

const T0 = Date.UTC(2025, 5, 1, 8);
const G1 = '11111111-1111-4111-8111-111111111111';
const G2 = '22222222-2222-4222-8222-222222222222';
const OTHER_GATEWAY = '99999999-9999-4999-8999-999999999999';
const MISSING = '00000000-0000-4000-8000-000000000000';
const base = `/${CUSTOMER}/job-configs`;

let ts: TestServer;
let now: number;
let user: ApiClient;
let userToken: string;
/** A configuration that exists before every scenario. */
let packing: { job_config_id: string };

beforeEach(async () => {
  now = T0;
  ts = await startTestServer({ clock: () => now });
  await insertGateway(ts, CUSTOMER, 'gw-1', G1);
  await insertGateway(ts, CUSTOMER, 'gw-2', G2);
  await insertCustomer(ts, 'other');
  await insertGateway(ts, 'other', 'theirs', OTHER_GATEWAY);
  ({ client: user, token: userToken } = await ts.createUser('USER_ROLE'));
  packing = await ts.admin.post(base, { job_name: 'Packing', start_barcode: 'PACK-S', end_barcode: 'PACK-E', gateway_ids: [G1] });
});

afterEach(async () => {
  await ts.close();
});

const error = (status: number, details: string) => {
  const titles: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict' };
  return { status, body: { title: titles[status], details } };
};

const body = { job_name: 'Picking', start_barcode: 'PICK-START', end_barcode: 'PICK-END', gateway_ids: [G2, G1] };

interface Scenario {
  name: string;
  as?: 'admin' | 'user' | 'anonymous';
  method: string;
  /** The path; `{packing}` stands for the existing configuration's id. */
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  expected: { status: number; body: unknown };
}

const scenarios: Scenario[] = [
  {
    name: 'no Authorization header is 401',
    as: 'anonymous',
    method: 'GET',
    path: base,
    expected: error(401, 'No authentication header found: send the IdToken in the Authorization header.'),
  },
  {
    name: "another customer's path is 403",
    method: 'GET',
    path: '/other/job-configs',
    expected: error(403, 'Your account belongs to customer "acme" and has no access to customer "other".'),
  },
  {
    name: 'a USER_ROLE may not create',
    as: 'user',
    method: 'POST',
    path: base,
    body,
    expected: error(403, 'Your role USER_ROLE lacks the permission "jobconfig.write" this call needs; ask an administrator.'),
  },
  {
    name: 'a USER_ROLE may not delete',
    as: 'user',
    method: 'DELETE',
    path: `${base}/{packing}`,
    expected: error(403, 'Your role USER_ROLE lacks the permission "jobconfig.write" this call needs; ask an administrator.'),
  },
  {
    name: 'empty gateway_ids is 400',
    method: 'POST',
    path: base,
    body: { ...body, gateway_ids: [] },
    expected: error(400, 'Body field "gateway_ids" must NOT have fewer than 1 items.'),
  },
  {
    name: 'an unknown gateway is 400 naming it',
    method: 'POST',
    path: base,
    body: { ...body, gateway_ids: [G1, MISSING] },
    expected: error(400, `Body field "gateway_ids" names gateway "${MISSING}", which is not a gateway of this customer.`),
  },
  {
    name: "another customer's gateway is 400 naming it",
    method: 'POST',
    path: base,
    body: { ...body, gateway_ids: [OTHER_GATEWAY] },
    expected: error(400, `Body field "gateway_ids" names gateway "${OTHER_GATEWAY}", which is not a gateway of this customer.`),
  },
  {
    name: 'a gateway listed twice is 400',
    method: 'POST',
    path: base,
    body: { ...body, gateway_ids: [G1, G2, G1] },
    expected: error(400, `Body field "gateway_ids" lists gateway "${G1}" more than once.`),
  },
  {
    name: 'a missing field is 400',
    method: 'POST',
    path: base,
    body: { job_name: 'Picking', start_barcode: 'S', gateway_ids: [G1] },
    expected: error(400, 'Missing body field "end_barcode".'),
  },
  {
    name: 'an unknown field is 400',
    method: 'POST',
    path: base,
    body: { ...body, version: 7 },
    expected: error(400, 'Unknown body field "version": it is not part of this call.'),
  },
  {
    name: 'an empty start_barcode is 400',
    method: 'POST',
    path: base,
    body: { ...body, start_barcode: '' },
    expected: error(400, 'Body field "start_barcode" must NOT have fewer than 1 characters.'),
  },
  {
    name: 'a duplicate job_name is 409',
    method: 'POST',
    path: base,
    body: { ...body, job_name: 'Packing' },
    expected: error(409, 'A job configuration named "Packing" already exists: choose another job_name.'),
  },
  {
    name: 'GET of an unknown id is 404',
    method: 'GET',
    path: `${base}/${MISSING}`,
    expected: error(404, `Job configuration "${MISSING}" does not exist.`),
  },
  {
    name: 'DELETE of an unknown id is 404',
    method: 'DELETE',
    path: `${base}/${MISSING}`,
    expected: error(404, `Job configuration "${MISSING}" does not exist.`),
  },
  {
    name: 'PATCH of an unknown id is 404',
    method: 'PATCH',
    path: `${base}/${MISSING}`,
    body: { job_name: 'x' },
    expected: error(404, `Job configuration "${MISSING}" does not exist.`),
  },
  {
    name: 'PATCH with an empty body is 400',
    method: 'PATCH',
    path: `${base}/{packing}`,
    body: {},
    expected: error(400, 'The request body must NOT have fewer than 1 properties.'),
  },
  {
    name: 'PATCH to an unknown gateway is 400 naming it',
    method: 'PATCH',
    path: `${base}/{packing}`,
    body: { gateway_ids: [MISSING] },
    expected: error(400, `Body field "gateway_ids" names gateway "${MISSING}", which is not a gateway of this customer.`),
  },
  {
    name: 'PATCH with a stale If-Match is 409',
    method: 'PATCH',
    path: `${base}/{packing}`,
    body: { job_name: 'Packing 2' },
    headers: { 'if-match': '"4"' },
    expected: error(409, 'Job configuration "{packing}" has changed (it is at version 1): read it again and retry.'),
  },
  {
    name: 'PATCH with an unknown field is 400',
    method: 'PATCH',
    path: `${base}/{packing}`,
    body: { class: 'other' },
    expected: error(400, 'Unknown body field "class": it is not part of this call.'),
  },
];

describe('job configuration scenarios', () => {
  for (const s of scenarios) {
    it(s.name, async () => {
      const token = s.as === 'anonymous' ? undefined : s.as === 'user' ? userToken : ts.adminToken;
      const fill = (text: string) => text.replaceAll('{packing}', packing.job_config_id);
      const answer = await call(ts.url, s.method, fill(s.path), { token, json: s.body, headers: s.headers });
      expect({ status: answer.status, body: answer.body }).toEqual(JSON.parse(fill(JSON.stringify(s.expected))));
    });
  }
});

describe('job configuration lifecycle', () => {
  it('creates with version 1, keeps the gateway order, and a USER_ROLE may read it', async () => {
    now = T0 + 1_000;
    const created = await ts.admin.request<Record<string, unknown>>('POST', base, { body });
    expect(created.status).toBe(201);
    const id = created.body.job_config_id as string;
    const expected = {
      job_config_id: id,
      job_name: 'Picking',
      created: T0 + 1_000,
      last_updated: T0 + 1_000,
      start_barcode: 'PICK-START',
      end_barcode: 'PICK-END',
      gateway_ids: [G2, G1],
      class: 'jobconfig',
      version: 1,
    };
    expect(created.body).toEqual(expected);
    expect(created.headers.etag).toBe('1');
    expect(await user.get(`${base}/${id}`)).toEqual(expected);
  });

  it('PATCH raises version by one and last_updated, and changes only the given fields', async () => {
    now = T0 + 60_000;
    const first = await ts.admin.request('PATCH', `${base}/${packing.job_config_id}`, {
      body: { end_barcode: 'PACK-DONE', gateway_ids: [G2, G1] },
      headers: { 'if-match': '1' },
    });
    expect(first.headers.etag).toBe('2');
    now = T0 + 120_000;
    const second = await ts.admin.patch(`${base}/${packing.job_config_id}`, { job_name: 'Packing line' });
    expect(second).toEqual({
      job_config_id: packing.job_config_id,
      job_name: 'Packing line',
      created: T0,
      last_updated: T0 + 120_000,
      start_barcode: 'PACK-S',
      end_barcode: 'PACK-DONE',
      gateway_ids: [G2, G1],
      class: 'jobconfig',
      version: 3,
    });
  });

  it('PATCH to the name of another configuration is 409; to its own name is fine', async () => {
    await ts.admin.post(base, body);
    expect(await call(ts.url, 'PATCH', `${base}/${packing.job_config_id}`, { token: ts.adminToken, json: { job_name: 'Picking' } })).toMatchObject(
      error(409, 'A job configuration named "Picking" already exists: choose another job_name.'),
    );
    expect(await ts.admin.patch(`${base}/${packing.job_config_id}`, { job_name: 'Packing' })).toMatchObject({ version: 2 });
  });

  it('the list ETag changes on every create, update and delete, and not on a refused write', async () => {
    const etag = async () => (await ts.admin.request('GET', base)).headers.etag;
    expect(await etag()).toBe('1');
    const picking = await ts.admin.post<{ job_config_id: string }>(base, body);
    expect(await etag()).toBe('2');
    await call(ts.url, 'POST', base, { token: ts.adminToken, json: body });
    expect(await etag()).toBe('2');
    await ts.admin.patch(`${base}/${picking.job_config_id}`, { start_barcode: 'P-S' });
    expect(await etag()).toBe('3');
    await ts.admin.delete(`${base}/${picking.job_config_id}`);
    expect(await etag()).toBe('4');
    await call(ts.url, 'DELETE', `${base}/${picking.job_config_id}`, { token: ts.adminToken });
    expect(await etag()).toBe('4');
  });

  it('lists oldest first in the list wrapper; If-None-Match with the current ETag is 304', async () => {
    now = T0 + 5;
    const picking = await ts.admin.post<{ job_config_id: string }>(base, body);
    const list = await ts.admin.request<{ items: { job_config_id: string }[] }>('GET', base);
    expect(list.body).toEqual({
      items: [await ts.admin.get(`${base}/${packing.job_config_id}`), await ts.admin.get(`${base}/${picking.job_config_id}`)],
      links: {},
      metadata: { description: 'Job configurations of the customer', size: 2, filters: [] },
    });
    const cached = await ts.admin.request('GET', base, { headers: { 'if-none-match': '"2"' } });
    expect([cached.status, cached.headers.etag]).toEqual([304, '2']);
    expect((await ts.admin.request('GET', base, { headers: { 'if-none-match': '1' } })).status).toBe(200);
  });

  it('a deleted gateway cannot be added, but does not block changing the rest', async () => {
    expect(await ts.server.ctx.store.gateways.markDeleted(CUSTOMER, G1, T0)).toBe(true);
    expect(await call(ts.url, 'POST', base, { token: ts.adminToken, json: body })).toMatchObject(
      error(400, `Body field "gateway_ids" names gateway "${G1}", which is not a gateway of this customer.`),
    );
    expect(await call(ts.url, 'PATCH', `${base}/${packing.job_config_id}`, { token: ts.adminToken, json: { gateway_ids: [G2, G1] } })).toMatchObject({ status: 400 });
    expect(await ts.admin.patch(`${base}/${packing.job_config_id}`, { job_name: 'Packing old' })).toMatchObject({ gateway_ids: [G1], version: 2 });
  });

  it('DELETE answers 204 and the configuration is gone', async () => {
    const answer = await ts.admin.request('DELETE', `${base}/${packing.job_config_id}`);
    expect([answer.status, answer.body]).toEqual([204, '']);
    expect((await call(ts.url, 'GET', `${base}/${packing.job_config_id}`, { token: ts.adminToken })).status).toBe(404);
    expect(await ts.admin.get(base)).toMatchObject({ items: [] });
  });
});
