import { describe, expect, it } from 'vitest';
import { call } from '../helpers/http.js';
import { BAD_TOKEN, GONE_USER, NO_HEADER, error, scenarioTable, type Given, type Json, type Scenario } from '../helpers/scenarios.js';
import { CUSTOMER } from '../helpers/server.js';
import { OTHER_CUSTOMER, startFoundation, type Foundation } from '../helpers/world.js';

/** A guarded endpoint of the foundation, with what a successful call needs and answers. */
interface Guarded {
  method: string;
  /** The path as the spec writes it. */
  label: string;
  path: Given<Foundation, string>;
  json?: Given<Foundation, Json>;
  /** The status of a successful call by the administrator. */
  ok: number;
  /** The permission USER_ROLE lacks for it, if it is an admin action. */
  adminOnly?: string;
}

let serial = 0;
const ENDPOINTS: Guarded[] = [
  { method: 'GET', label: '/{c}/me', path: `/${CUSTOMER}/me`, ok: 200 },
  { method: 'GET', label: '/{c}/features', path: `/${CUSTOMER}/features`, ok: 200 },
  { method: 'GET', label: '/{c}/users', path: `/${CUSTOMER}/users`, ok: 200, adminOnly: 'user.read' },
  {
    method: 'POST',
    label: '/{c}/users',
    path: `/${CUSTOMER}/users`,
    json: () => ({ first_name: 'G', last_name: 'Uard', role: 'USER_ROLE', email: `guard-${++serial}-${Date.now()}@example.com` }),
    ok: 200,
    adminOnly: 'user.write',
  },
  { method: 'GET', label: '/{c}/users/{id}', path: (w) => `/${CUSTOMER}/users/${w.admin.id}`, ok: 200, adminOnly: 'user.read' },
  { method: 'DELETE', label: '/{c}/users/{id}', path: async (w) => `/${CUSTOMER}/users/${(await w.newUser()).id}`, ok: 204, adminOnly: 'user.write' },
  { method: 'POST', label: '/{c}/users/{id}/invitation', path: async (w) => `/${CUSTOMER}/users/${(await w.newInvitee()).id}/invitation`, ok: 201, adminOnly: 'user.write' },
  { method: 'GET', label: '/{c}/api-keys', path: `/${CUSTOMER}/api-keys`, ok: 200, adminOnly: 'apikey.write' },
  { method: 'POST', label: '/{c}/api-keys', path: `/${CUSTOMER}/api-keys`, json: () => ({ name: `guard-${++serial}` }), ok: 201, adminOnly: 'apikey.write' },
  { method: 'GET', label: '/{c}/retention', path: `/${CUSTOMER}/retention`, ok: 200, adminOnly: 'retention.read' },
  { method: 'PUT', label: '/{c}/retention', path: `/${CUSTOMER}/retention`, json: { events_days: null }, ok: 200, adminOnly: 'retention.write' },
];

/** The same path under another customer id. */
const onCustomer = (customer: string, path: Given<Foundation, string>) => async (w: Foundation) => {
  const resolved = typeof path === 'function' ? await path(w) : path;
  return resolved.replace(`/${CUSTOMER}/`, `/${customer}/`);
};

function matrix(endpoint: Guarded): Scenario<Foundation>[] {
  const base = { method: endpoint.method, path: endpoint.path, json: endpoint.json };
  const rows: Scenario<Foundation>[] = [
    { ...base, name: 'Bearer token: success', auth: (w) => `Bearer ${w.admin.token}`, status: endpoint.ok },
    { ...base, name: 'bare token: success', auth: (w) => w.admin.token, status: endpoint.ok },
    { ...base, name: 'lower-case "bearer": success', auth: (w) => `bearer ${w.admin.token}`, status: endpoint.ok },
    { ...base, name: 'no Authorization header: 401', status: 401, body: NO_HEADER },
    { ...base, name: 'an empty Authorization header: 401', auth: '', status: 401, body: NO_HEADER },
    { ...base, name: 'a token that is no JWT: 401', auth: 'Bearer not-a-token', status: 401, body: BAD_TOKEN },
    { ...base, name: 'Basic credentials: 401', auth: 'Basic YWRtaW46cGFzc3dvcmQ=', status: 401, body: BAD_TOKEN },
    { ...base, name: 'a token with one character changed: 401', auth: (w) => `Bearer ${tamper(w.admin.token)}`, status: 401, body: BAD_TOKEN },
    { ...base, name: 'an expired token: 401', auth: async (w) => `Bearer ${await w.expiredToken()}`, status: 401, body: BAD_TOKEN },
    { ...base, name: "a deleted user's token: 401", auth: async (w) => `Bearer ${await w.deletedUserToken()}`, status: 401, body: GONE_USER },
    {
      ...base,
      name: "another customer's administrator on this customer's path: 403",
      auth: (w) => `Bearer ${w.otherAdmin.token}`,
      status: 403,
      body: error('Forbidden', `Your account belongs to customer "${OTHER_CUSTOMER}" and has no access to customer "${CUSTOMER}".`),
    },
    {
      ...base,
      name: "the administrator on another customer's path: 403",
      path: onCustomer(OTHER_CUSTOMER, endpoint.path),
      auth: (w) => `Bearer ${w.admin.token}`,
      status: 403,
      body: error('Forbidden', `Your account belongs to customer "${CUSTOMER}" and has no access to customer "${OTHER_CUSTOMER}".`),
    },
    {
      ...base,
      name: 'a customer that does not exist: 403, not 404',
      path: onCustomer('no-such-customer', endpoint.path),
      auth: (w) => `Bearer ${w.admin.token}`,
      status: 403,
      body: error('Forbidden', `Your account belongs to customer "${CUSTOMER}" and has no access to customer "no-such-customer".`),
    },
  ];
  if (endpoint.adminOnly) {
    rows.push({
      ...base,
      name: 'USER_ROLE on an admin action: 403',
      auth: (w) => `Bearer ${w.user.token}`,
      status: 403,
      body: error('Forbidden', `Your role USER_ROLE lacks the permission "${endpoint.adminOnly}" this call needs; ask an administrator.`),
    });
  } else {
    rows.push({ ...base, name: 'USER_ROLE: success', auth: (w) => `Bearer ${w.user.token}`, status: endpoint.ok });
  }
  return rows;
}

/** The token with one character of its signature changed. */
function tamper(token: string): string {
  const last = token.at(-2) === 'A' ? 'B' : 'A';
  return token.slice(0, -2) + last + token.slice(-1);
}

for (const endpoint of ENDPOINTS) {
  scenarioTable(`guard: ${endpoint.method} ${endpoint.label}`, startFoundation, matrix(endpoint));
}

describe('guard: every customer-scoped route, enumerated at run time', () => {
  it('answers 401 without a header and 403 to another customer, whatever the route', async () => {
    const w = await startFoundation();
    try {
      const routes = w.t.server.app.registeredRoutes.filter((route) => route.url.startsWith('/:customer_id/') && route.method !== 'HEAD');
      expect(routes.length).toBeGreaterThanOrEqual(7);
      const seen: string[] = [];
      for (const route of routes) {
        const path = route.url.replace(':customer_id', CUSTOMER).replace(/:[A-Za-z_][A-Za-z0-9_]*/g, 'some-id').replace('*', 'x');
        const anonymous = await call(w.url, route.method, path);
        const foreign = await call(w.url, route.method, path, { token: w.otherAdmin.token });
        seen.push(`${route.method} ${route.url}: ${anonymous.status} ${foreign.status}`);
        expect({ route: route.url, method: route.method, body: anonymous.body }).toEqual({ route: route.url, method: route.method, body: NO_HEADER });
        expect(foreign.body).toEqual(
          error('Forbidden', `Your account belongs to customer "${OTHER_CUSTOMER}" and has no access to customer "${CUSTOMER}".`),
        );
      }
      expect(seen.every((line) => line.endsWith(': 401 403'))).toBe(true);
    } finally {
      await w.close();
    }
  });
});
