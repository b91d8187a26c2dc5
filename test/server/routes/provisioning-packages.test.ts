import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { OTHER_CUSTOMER_REFUSED, T0, by, useFixture, type Fixture } from '../../helpers/gateways.js';
import { call } from '../../helpers/http.js';
import { NO_HEADER, scenarioRows } from '../../helpers/scenarios.js';
import { lacks } from '../../helpers/users.js';

const DAY = 24 * 60 * 60 * 1000;
const PATH = '/acme/create-provisioning-package';

async function createGateway(f: Fixture, name: string): Promise<string> {
  const r = await call(f.t.url, 'POST', '/acme/gateways', { token: f.tokens.admin, json: { name, usecase: 'inbound', station: `st-${name}` } });
  return (r.body as { id: string }).id;
}

async function gatewayNames(f: Fixture): Promise<string[]> {
  const list = await call(f.t.url, 'GET', '/acme/gateways', { token: f.tokens.admin });
  return (list.body as { items: { name: string }[] }).items.map((g) => g.name).sort();
}

interface PackageAnswer {
  gateways: { gateway_id: string; package_url: string }[];
}

describe('POST /{customer_id}/create-provisioning-package', () => {
  const { fixture, clock } = useFixture();
  beforeAll(async () => {
    const f = fixture();
    f.ids.a = await createGateway(f, 'A');
    f.ids.b = await createGateway(f, 'B');
    f.ids.prepared = await createGateway(f, 'Prepared');
    await call(f.t.url, 'POST', `/acme/gateways/${f.ids.prepared}/prepare-provisioning`, { token: f.tokens.admin });
  });

  it('prepares existing and new gateways in request order; each link downloads a package whose token provisions', async () => {
    const f = fixture();
    const wifi = { ssid: 'warehouse', password: 'correct horse', authentication_type: 'WPA2-PSK' };
    const r = await call(f.t.url, 'POST', PATH, {
      token: f.tokens.admin,
      json: { gateways: [{ gateway_id: f.ids.a }, { gateway_name: 'New 1' }, { gateway_name: 'New 2', usecase: 'outbound', station: 'gate 2' }], wifi },
    });
    expect(r.status).toBe(200);
    const answer = r.body as PackageAnswer;
    expect(answer.gateways.map((g) => g.gateway_id)[0]).toBe(f.ids.a);
    expect(answer.gateways).toHaveLength(3);
    const expires = T0 + DAY;
    for (const entry of answer.gateways) {
      expect(Object.keys(entry)).toEqual(['gateway_id', 'package_url']);
      expect(entry.package_url).toMatch(new RegExp(`^${f.t.url}/downloads/packages/${expires}-[0-9a-f]{32}\\.json\\?expires=${expires}&signature=[A-Za-z0-9_-]+$`));
    }

    // New gateways exist with the documented defaults (use case "default", station = name) and are REGISTERING.
    const fresh = await Promise.all(answer.gateways.slice(1).map((g) => call(f.t.url, 'GET', `/acme/gateways/${g.gateway_id}`, { token: f.tokens.admin })));
    expect(fresh.map((g) => g.body as { name: string; usecase: string; station: string; connectivity_status: string }).map(({ name, usecase, station, connectivity_status }) => ({ name, usecase, station, connectivity_status }))).toEqual([
      { name: 'New 1', usecase: 'default', station: 'New 1', connectivity_status: 'REGISTERING' },
      { name: 'New 2', usecase: 'outbound', station: 'gate 2', connectivity_status: 'REGISTERING' },
    ]);

    const documents = await Promise.all(answer.gateways.map((g) => call('', 'GET', g.package_url)));
    documents.forEach((d, i) => {
      expect(d.status).toBe(200);
      expect(d.headers['content-type']).toBe('application/json; charset=utf-8');
      const document = d.body as { token: string };
      expect(document).toEqual({
        base_url: f.t.url,
        registration_path: '/provisioning',
        token: document.token,
        wifi,
        gateway_id: answer.gateways[i]!.gateway_id,
        expires_at: expires,
        ca_certificate: f.t.server.ctx.ca.certPem,
      });
      expect(document.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    });
    // The files hold live tokens and the Wi-Fi password.
    const dir = join(f.t.dataDir, 'packages');
    for (const file of readdirSync(dir)) expect(statSync(join(dir, file)).mode & 0o777).toBe(0o600);

    const device = await call(f.t.url, 'POST', '/provisioning', { json: { token: (documents[1]!.body as { token: string }).token } });
    expect(device.status).toBe(200);
    expect((device.body as { certificate_common_name: string }).certificate_common_name).toBe(answer.gateways[1]!.gateway_id);
  });

  it('a package link stops working after 24 hours: 403', async () => {
    const f = fixture();
    const r = await call(f.t.url, 'POST', PATH, { token: f.tokens.admin, json: { gateways: [{ gateway_name: 'Short-lived' }] } });
    const link = (r.body as PackageAnswer).gateways[0]!.package_url;
    expect((await call('', 'GET', link)).body).toMatchObject({ wifi: null });
    clock.now = T0 + DAY;
    try {
      expect(await call('', 'GET', link)).toMatchObject({ status: 403, body: { title: 'Forbidden', details: 'This download link has expired: request a new one.' } });
    } finally {
      clock.now = T0;
    }
  });

  it('expired package files are removed at the next package call', async () => {
    const f = fixture();
    const dir = join(f.t.dataDir, 'packages');
    expect(readdirSync(dir).length).toBeGreaterThan(0);
    clock.now = T0 + DAY;
    try {
      const token = await f.t.login('admin@example.com', 'admin-password-123');
      const r = await call(f.t.url, 'POST', PATH, { token, json: { gateways: [{ gateway_name: 'Next day' }] } });
      expect(r.status).toBe(200);
      expect(readdirSync(dir)).toEqual([new URL((r.body as PackageAnswer).gateways[0]!.package_url).pathname.split('/').pop()]);
    } finally {
      clock.now = T0;
    }
  });

  it('two concurrent calls racing for one new name: one 200, one 409; the loser prepared nothing and left no file', async () => {
    const f = fixture();
    const [p, q] = [await createGateway(f, 'P'), await createGateway(f, 'Q')];
    const dir = join(f.t.dataDir, 'packages');
    const before = readdirSync(dir);
    const [first, second] = await Promise.all([
      call(f.t.url, 'POST', PATH, { token: f.tokens.admin, json: { gateways: [{ gateway_name: 'Contested' }, { gateway_id: p }] } }),
      call(f.t.url, 'POST', PATH, { token: f.tokens.admin, json: { gateways: [{ gateway_id: q }, { gateway_name: 'Contested' }] } }),
    ]);
    expect([first.status, second.status].sort()).toEqual([200, 409]);
    const [winner, loser, loserExisting] = first.status === 200 ? [first, second, q] : [second, first, p];
    expect(loser.body).toEqual({ title: 'Conflict', details: expect.stringMatching(/^A gateway named "Contested" already exists/) });
    expect((await f.t.server.ctx.store.gateways.byId('acme', loserExisting))!.provisioning_prepared).toBeNull();
    const files = (winner.body as PackageAnswer).gateways.map((g) => new URL(g.package_url).pathname.split('/').pop());
    expect(readdirSync(dir).filter((name) => !before.includes(name)).sort()).toEqual(files.sort());
    // Tidy up for the tables below: these gateways are not part of their expectations.
    for (const id of [p, q, ...(winner.body as PackageAnswer).gateways.map((g) => g.gateway_id)]) {
      await call(f.t.url, 'DELETE', `/acme/gateways/${id}`, { token: f.tokens.admin });
    }
  });

  it('two concurrent calls racing for one existing gateway: one 200, one 400; the loser rolled back and removed its files', async () => {
    const f = fixture();
    const [x, ya, yb] = [await createGateway(f, 'X'), await createGateway(f, 'Ya'), await createGateway(f, 'Yb')];
    const dir = join(f.t.dataDir, 'packages');
    const before = readdirSync(dir);
    // Each loser writes the package of its Y before it finds X taken inside the transaction.
    const [first, second] = await Promise.all([
      call(f.t.url, 'POST', PATH, { token: f.tokens.admin, json: { gateways: [{ gateway_id: ya }, { gateway_id: x }] } }),
      call(f.t.url, 'POST', PATH, { token: f.tokens.admin, json: { gateways: [{ gateway_id: yb }, { gateway_id: x }] } }),
    ]);
    expect([first.status, second.status].sort()).toEqual([200, 400]);
    const [winner, loser, loserY] = first.status === 200 ? [first, second, yb] : [second, first, ya];
    expect(loser.body).toEqual({ title: 'Bad Request', details: expect.stringContaining(`"${x}" was already prepared for provisioning`) });
    expect((await f.t.server.ctx.store.gateways.byId('acme', loserY))!.provisioning_prepared).toBeNull();
    const files = (winner.body as PackageAnswer).gateways.map((g) => new URL(g.package_url).pathname.split('/').pop());
    expect(readdirSync(dir).filter((name) => !before.includes(name)).sort()).toEqual(files.sort());
    for (const id of [x, ya, yb]) await call(f.t.url, 'DELETE', `/acme/gateways/${id}`, { token: f.tokens.admin });
  });

  const refusedNothingCreated = async (f: Fixture) => {
    expect(await gatewayNames(f)).toEqual(['A', 'B', 'New 1', 'New 2', 'Next day', 'Prepared', 'Short-lived']);
    expect((await f.t.server.ctx.store.gateways.byId('acme', f.ids.b!))!.provisioning_prepared).toBeNull();
  };

  scenarioRows(
    [
      {
        name: 'an element with neither gateway_id nor gateway_name: 400',
        method: 'POST',
        path: PATH,
        auth: by.admin,
        json: { gateways: [{ gateway_name: 'C' }, {}] },
        status: 400,
        body: { title: 'Bad Request', details: 'Body field "gateways.1" must name either "gateway_id" (an existing gateway) or "gateway_name" (a new one), not neither.' },
        check: (_r, f) => refusedNothingCreated(f),
      },
      {
        name: 'an element with both: 400',
        method: 'POST',
        path: PATH,
        auth: by.admin,
        json: (f: Fixture) => ({ gateways: [{ gateway_id: f.ids.b, gateway_name: 'C' }] }),
        status: 400,
        body: { title: 'Bad Request', details: 'Body field "gateways.0" must name either "gateway_id" (an existing gateway) or "gateway_name" (a new one), not both.' },
      },
      {
        name: 'an unknown gateway_id: 400, and the new gateway before it is not created',
        method: 'POST',
        path: PATH,
        auth: by.admin,
        json: { gateways: [{ gateway_name: 'C' }, { gateway_id: 'nope' }] },
        status: 400,
        body: { title: 'Bad Request', details: 'Body field "gateways.1.gateway_id": gateway "nope" does not exist.' },
        check: (_r, f) => refusedNothingCreated(f),
      },
      {
        name: 'an already prepared gateway: 400, and the other gateway stays unprepared',
        method: 'POST',
        path: PATH,
        auth: by.admin,
        json: (f: Fixture) => ({ gateways: [{ gateway_id: f.ids.b }, { gateway_id: f.ids.prepared }] }),
        status: 400,
        body: (f: Fixture) => ({ title: 'Bad Request', details: `Body field "gateways.1.gateway_id": gateway "${f.ids.prepared}" was already prepared for provisioning; a gateway is prepared only once.` }),
        check: (_r, f) => refusedNothingCreated(f),
      },
      {
        name: 'usecase with an existing gateway: 400',
        method: 'POST',
        path: PATH,
        auth: by.admin,
        json: (f: Fixture) => ({ gateways: [{ gateway_id: f.ids.b, usecase: 'x' }] }),
        status: 400,
        body: { title: 'Bad Request', details: 'Body field "gateways.0" names an existing gateway: "usecase" and "station" apply only with "gateway_name"; change an existing gateway with PATCH.' },
      },
      {
        name: 'one gateway twice: 400',
        method: 'POST',
        path: PATH,
        auth: by.admin,
        json: (f: Fixture) => ({ gateways: [{ gateway_id: f.ids.b }, { gateway_id: f.ids.b }] }),
        status: 400,
        body: (f: Fixture) => ({ title: 'Bad Request', details: `Gateway "${f.ids.b}" appears more than once in body field "gateways".` }),
      },
      {
        name: 'a new name that is taken: 409',
        method: 'POST',
        path: PATH,
        auth: by.admin,
        json: { gateways: [{ gateway_name: 'A' }] },
        status: 409,
        body: { title: 'Conflict', details: 'A gateway named "A" already exists: name it by "gateway_id" to provision it.' },
      },
      {
        name: 'a new name twice: 409',
        method: 'POST',
        path: PATH,
        auth: by.admin,
        json: { gateways: [{ gateway_name: 'D' }, { gateway_name: 'D' }] },
        status: 409,
        body: { title: 'Conflict', details: 'Gateway names must be unique: "D" appears more than once in this request.' },
        check: (_r, f) => refusedNothingCreated(f),
      },
      { name: 'an empty list: 400', method: 'POST', path: PATH, auth: by.admin, json: { gateways: [] }, status: 400, body: { title: 'Bad Request', details: 'Body field "gateways" must NOT have fewer than 1 items.' } },
      {
        name: 'more than 100: 400',
        method: 'POST',
        path: PATH,
        auth: by.admin,
        json: { gateways: Array.from({ length: 101 }, (_, i) => ({ gateway_name: `N${i}` })) },
        status: 400,
        body: { title: 'Bad Request', details: 'Body field "gateways" must NOT have more than 100 items.' },
      },
      {
        name: 'an unknown wifi field: 400',
        method: 'POST',
        path: PATH,
        auth: by.admin,
        json: { gateways: [{ gateway_name: 'E' }], wifi: { ssid: 's', channel: 6 } },
        status: 400,
        body: { title: 'Bad Request', details: 'Unknown body field "wifi.channel": it is not part of this call.' },
      },
      { name: 'no Authorization: 401', method: 'POST', path: PATH, json: { gateways: [{ gateway_name: 'E' }] }, status: 401, body: NO_HEADER },
      { name: 'USER_ROLE lacks gateway.provision: 403', method: 'POST', path: PATH, auth: by.user, json: { gateways: [{ gateway_name: 'E' }] }, status: 403, body: lacks('gateway.provision') },
      { name: "another customer's path: 403", method: 'POST', path: PATH, auth: by.other, json: { gateways: [{ gateway_name: 'E' }] }, status: 403, body: OTHER_CUSTOMER_REFUSED },
    ],
    fixture,
  );
});
