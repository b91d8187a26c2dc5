import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';
import { scanRow } from '../../helpers/events.js';
import { call } from '../../helpers/http.js';
import { insertCustomer, insertEvents, insertGateway } from '../../helpers/store-rows.js';
import { DEFAULT_RANGE, G1, G2, G3, JOB, cases } from '../../../fixtures/job-analysis-cases.js';

const MISSING = '00000000-0000-4000-8000-000000000000';

let ts: TestServer;

beforeEach(async () => {
  ts = await startTestServer();
  for (const id of [G1, G2, G3]) await insertGateway(ts.server, CUSTOMER, `name-${id}`, id);
});

afterEach(async () => {
  await ts.close();
});

async function createConfig(gatewayIds: string[], barcodes = JOB): Promise<string> {
  const config = await ts.admin.post<{ job_config_id: string }>(`/${CUSTOMER}/job-configs`, {
    job_name: 'Job',
    ...barcodes,
    gateway_ids: gatewayIds,
  });
  return config.job_config_id;
}

describe('job analysis through HTTP, over seeded events', () => {
  for (const c of cases) {
    it(c.name, async () => {
      const rows = c.events.map((e) => scanRow(e.id, e.gateway_id!, e.created, e.scan_code, e.type));
      await insertEvents(ts.server, CUSTOMER, rows);
      const id = await createConfig(c.gateways ?? [G1], c.barcodes);
      const answer = await ts.admin.post(`/${CUSTOMER}/job-analysis`, { job_config_id: id, ...(c.range ?? DEFAULT_RANGE) });
      expect(answer).toEqual({ results: c.expected });
    });
  }

  it('a USER_ROLE may run it, and an empty range has no jobs', async () => {
    const id = await createConfig([G1, G2]);
    const user = await ts.createUser('USER_ROLE');
    const answer = await user.client.post(`/${CUSTOMER}/job-analysis`, { job_config_id: id, start_time: 500, end_time: 500 });
    expect(answer).toEqual({ results: [{ gateway_id: G1, jobs: [] }, { gateway_id: G2, jobs: [] }] });
  });
});

describe('job analysis refusals', () => {
  const path = `/${CUSTOMER}/job-analysis`;
  const refusals: { name: string; body: Record<string, unknown>; status: number; details: string }[] = [
    {
      name: 'end_time before start_time',
      body: { start_time: 2_000, end_time: 1_000 },
      status: 400,
      details: 'Body field "end_time" (1000) is before "start_time" (2000).',
    },
    { name: 'a missing start_time', body: { start_time: undefined, end_time: 1_000 }, status: 400, details: 'Missing body field "start_time".' },
    { name: 'a missing job_config_id', body: { job_config_id: undefined }, status: 400, details: 'Missing body field "job_config_id".' },
    { name: 'a start_time that is not a number', body: { start_time: 'yesterday' }, status: 400, details: 'Body field "start_time" must be integer.' },
    { name: 'an unknown field', body: { gateway_id: G1 }, status: 400, details: 'Unknown body field "gateway_id": it is not part of this call.' },
    {
      name: 'an unknown job configuration',
      body: { job_config_id: MISSING },
      status: 404,
      details: `Job configuration "${MISSING}" does not exist.`,
    },
  ];
  for (const r of refusals) {
    it(`${r.name} is ${r.status}`, async () => {
      const id = await createConfig([G1]);
      const answer = await call(ts.url, 'POST', path, { token: ts.adminToken, json: { job_config_id: id, start_time: 0, end_time: 1_000, ...r.body } });
      expect(answer.status).toBe(r.status);
      expect(answer.body).toEqual({ title: r.status === 404 ? 'Not Found' : 'Bad Request', details: r.details });
    });
  }

  it("another customer's job configuration is 404, their path 403", async () => {
    await insertCustomer(ts.server, 'other');
    await insertGateway(ts.server, 'other', 'theirs', 'gw-other');
    await ts.server.ctx.store.jobConfigs.create('other', MISSING, { job_name: 'Theirs', start_barcode: 'S', end_barcode: 'E', gateway_ids: ['gw-other'] }, 0);
    expect((await call(ts.url, 'POST', path, { token: ts.adminToken, json: { job_config_id: MISSING, start_time: 0, end_time: 1 } })).status).toBe(404);
    expect((await call(ts.url, 'POST', '/other/job-analysis', { token: ts.adminToken, json: { job_config_id: MISSING, start_time: 0, end_time: 1 } })).status).toBe(403);
  });

  it('no Authorization header is 401', async () => {
    expect((await call(ts.url, 'POST', path, { json: { job_config_id: MISSING, start_time: 0, end_time: 1 } })).status).toBe(401);
  });
});
