// The commands API (docs/commands.md): create one or many, list a gateway's newest first, read,
// cancel; 400/403/404/409 as the scenario table says; each creation and cancel audited.
import { expect } from 'vitest';
import type { ApiCommand } from '../../../src/domain/commands.js';
import { call } from '../../helpers/http.js';
import { UUID_V7, uuidV7Time } from '../../helpers/patterns.js';
import { NO_HEADER, error, scenarioTable, type Scenario } from '../../helpers/scenarios.js';
import { CUSTOMER } from '../../helpers/server.js';
import { asAdmin, asUser, lacks } from '../../helpers/users.js';
import { OTHER_CUSTOMER, startFoundation, type Foundation } from '../../helpers/world.js';

const MISSING = '99999999-9999-4999-8999-999999999999';

interface CommandsWorld extends Foundation {
  gateways: string[];
  /** A gateway of globex. */
  foreign: string;
}

async function setup(): Promise<CommandsWorld> {
  const w = await startFoundation();
  const made = await call(w.url, 'POST', `/${CUSTOMER}/gateways/bulk-create`, {
    authorization: asAdmin(w),
    json: { gateways: [1, 2, 3].map((n) => ({ name: `dock-${n}`, usecase: 'u', station: 's' })) },
  });
  const other = await call(w.url, 'POST', `/${OTHER_CUSTOMER}/gateways`, { authorization: `Bearer ${w.otherAdmin.token}`, json: { name: 'g', usecase: 'u', station: 's' } });
  w.clock.freeze(Date.now());
  return { ...w, gateways: (made.body as { id: string }[]).map((g) => g.id), foreign: (other.body as { id: string }).id };
}

/** A command's body as a 201 gives it, at the frozen clock. */
const queued = (w: CommandsWorld, gateway: number, name = 'feedback', parameters: object = { sequence: 'OK' }, ttl = 3600, device: string | null = null) => ({
  command_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
  gateway_id: w.gateways[gateway]!,
  device_id: device,
  name,
  parameters,
  status: 'QUEUED',
  created: w.clock.now(),
  last_updated: w.clock.now(),
  expires_at: w.clock.now() + ttl * 1000,
});

const post = (w: CommandsWorld, gateway: number, json: object) => call(w.url, 'POST', `/${CUSTOMER}/gateways/${w.gateways[gateway]}/commands`, { authorization: asAdmin(w), json });
const commandOf = async (w: CommandsWorld, gateway: number, json: object = { name: 'feedback', parameters: { sequence: 'OK' } }) => (await post(w, gateway, json)).body as ApiCommand;

const badCreate = (name: string, json: object, details: string): Scenario<CommandsWorld> => ({
  name: `POST a command with ${name}: 400`,
  method: 'POST',
  path: (w) => `/${CUSTOMER}/gateways/${w.gateways[0]}/commands`,
  auth: asAdmin,
  json,
  status: 400,
  body: error('Bad Request', details),
});

const scenarios: Scenario<CommandsWorld>[] = [
  {
    name: 'POST /gateways/{id}/commands: 201 QUEUED, readable by id, audited',
    method: 'POST',
    path: (w) => `/${CUSTOMER}/gateways/${w.gateways[0]}/commands`,
    auth: asAdmin,
    json: { name: 'feedback', parameters: { sequence: 'OK' }, ttl_seconds: 600, device_id: 'ring-1' },
    status: 201,
    body: (w) => queued(w, 0, 'feedback', { sequence: 'OK' }, 600, 'ring-1'),
    check: async (answer, w) => {
      const created = answer.body as ApiCommand;
      const read = await call(w.url, 'GET', `/${CUSTOMER}/commands/${created.command_id}`, { authorization: asAdmin(w) });
      expect({ status: read.status, body: read.body }).toEqual({ status: 200, body: created });
      const audit = await call(w.url, 'GET', `/${CUSTOMER}/audit-log?action=command.created&end_time=${w.clock.now() + 1}`, { authorization: asAdmin(w) });
      expect((audit.body as { items: unknown[] }).items).toContainEqual(
        expect.objectContaining({ action: 'command.created', target: { type: 'command', id: created.command_id }, details: { gateway_id: w.gateways[0], name: 'feedback' } }),
      );
      // Time-ordered (domain/command-ids.ts): the id carries its creation time.
      expect([created.command_id, uuidV7Time(created.command_id)]).toEqual([expect.stringMatching(UUID_V7), created.created]);
    },
  },
  {
    name: 'a command without parameters or a known name: {} and the default lifetime of an hour',
    method: 'POST',
    path: (w) => `/${CUSTOMER}/gateways/${w.gateways[1]}/commands`,
    auth: asAdmin,
    json: { name: 'reboot.now' },
    status: 201,
    body: (w) => queued(w, 1, 'reboot.now', {}, 3600),
  },
  {
    name: 'POST /commands: one per gateway, in the order given, 201',
    method: 'POST',
    path: `/${CUSTOMER}/commands`,
    auth: asAdmin,
    json: (w) => ({ gateway_ids: [w.gateways[2], w.gateways[0].toUpperCase()], name: 'display', parameters: { template: 'pick', fields: { n: 3 } } }),
    status: 201,
    body: (w) => [queued(w, 2, 'display', { template: 'pick', fields: { n: 3 } }), queued(w, 0, 'display', { template: 'pick', fields: { n: 3 } })],
  },
  {
    name: 'GET /gateways/{id}/commands: newest first, pages of limit, links.next continues',
    method: 'GET',
    path: (w) => `/${CUSTOMER}/gateways/${w.gateways[1]}/commands?limit=2`,
    auth: asAdmin,
    status: 200,
    check: async (answer, w) => {
      // Three more for dock-2, a millisecond apart.
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        w.clock.advance(1);
        ids.push((await commandOf(w, 1, { name: `n${i}` })).command_id);
      }
      const first = await call(w.url, 'GET', `/${CUSTOMER}/gateways/${w.gateways[1]}/commands?limit=2`, { authorization: asAdmin(w) });
      const page = first.body as { items: ApiCommand[]; links: { next: string }; metadata: { description: string } };
      expect(page.items.map((c) => c.name)).toEqual(['n2', 'n1']);
      expect(page.metadata.description).toBe('Commands of gateway dock-2, newest first');
      const second = await call(w.url, 'GET', page.links.next, { authorization: asAdmin(w) });
      expect((second.body as { items: ApiCommand[] }).items.map((c) => c.name)).toEqual(['n0', 'reboot.now']);
      expect(answer.status).toBe(200);
    },
  },
  {
    name: 'POST /commands/{id}/cancel while QUEUED: 200 CANCELED, then 409',
    method: 'POST',
    path: async (w) => `/${CUSTOMER}/commands/${(await commandOf(w, 2)).command_id}/cancel`,
    auth: asAdmin,
    status: 200,
    fields: { status: 'CANCELED', name: 'feedback' },
    check: async (answer, w) => {
      const id = (answer.body as ApiCommand).command_id;
      const again = await call(w.url, 'POST', `/${CUSTOMER}/commands/${id}/cancel`, { authorization: asAdmin(w) });
      expect({ status: again.status, body: again.body }).toEqual({
        status: 409,
        body: error('Conflict', `Command "${id}" is CANCELED: only a QUEUED command can be canceled.`),
      });
    },
  },
  {
    name: 'a command past its expires_at reads as EXPIRED and cannot be canceled: 409',
    method: 'GET',
    path: async (w) => `/${CUSTOMER}/commands/${(await commandOf(w, 2, { name: 'beep', ttl_seconds: 1 })).command_id}`,
    auth: asAdmin,
    status: 200,
    fields: { status: 'QUEUED' },
    check: async (answer, w) => {
      const id = (answer.body as ApiCommand).command_id;
      w.clock.advance(1000);
      const read = await call(w.url, 'GET', `/${CUSTOMER}/commands/${id}`, { authorization: asAdmin(w) });
      expect(read.body).toMatchObject({ status: 'EXPIRED' });
      const cancel = await call(w.url, 'POST', `/${CUSTOMER}/commands/${id}/cancel`, { authorization: asAdmin(w) });
      expect({ status: cancel.status, body: cancel.body }).toEqual({ status: 409, body: error('Conflict', `Command "${id}" is EXPIRED: only a QUEUED command can be canceled.`) });
    },
  },
  badCreate('a bad name', { name: 'Reboot' }, 'Field "name" must match ^[a-z][a-z0-9_.-]{0,63}$: a lower-case letter, then up to 63 of a-z, 0-9, "_", "." and "-".'),
  badCreate('a feedback without its sequence', { name: 'feedback', parameters: { sequence: 'MAYBE' } }, 'Field "parameters.sequence" of a feedback command must be one of OK, NOK, WARNING.'),
  badCreate('a display without a template', { name: 'display', parameters: {} }, 'Field "parameters.template" of a display command must be a string.'),
  badCreate('parameters over 16 KiB', { name: 'x', parameters: { a: 'b'.repeat(16 * 1024) } }, 'Field "parameters" must be at most 16384 bytes as JSON.'),
  badCreate('a ttl of 0', { name: 'x', ttl_seconds: 0 }, 'Body field "ttl_seconds" must be >= 1.'),
  badCreate('a ttl over 7 days', { name: 'x', ttl_seconds: 604801 }, 'Body field "ttl_seconds" must be <= 604800.'),
  badCreate('an unknown field', { name: 'x', priority: 1 }, 'Unknown body field "priority": it is not part of this call.'),
  {
    name: 'POST /commands naming a gateway twice: 400',
    method: 'POST',
    path: `/${CUSTOMER}/commands`,
    auth: asAdmin,
    json: (w) => ({ gateway_ids: [w.gateways[0], w.gateways[0]], name: 'x' }),
    status: 400,
    body: (w) => error('Bad Request', `Field "gateway_ids" names "${w.gateways[0]}" more than once: name each gateway once.`),
  },
  {
    name: 'POST /commands over 1,000 gateways: 400',
    method: 'POST',
    path: `/${CUSTOMER}/commands`,
    auth: asAdmin,
    json: { gateway_ids: Array.from({ length: 1001 }, (_, i) => `g${i}`), name: 'x' },
    status: 400,
    body: error('Bad Request', 'Body field "gateway_ids" must NOT have more than 1000 items.'),
  },
  {
    name: 'POST /commands naming a missing or foreign gateway: 404 naming them, nothing stored',
    method: 'POST',
    path: `/${CUSTOMER}/commands`,
    auth: asAdmin,
    json: (w) => ({ gateway_ids: [w.gateways[0], MISSING, w.foreign], name: 'nothing' }),
    status: 404,
    body: (w) => error('Not Found', `Gateways "${MISSING}", "${w.foreign}" do not exist: see GET /${CUSTOMER}/gateways.`),
    check: async (_answer, w) => {
      const listed = await call(w.url, 'GET', `/${CUSTOMER}/gateways/${w.gateways[0]}/commands`, { authorization: asAdmin(w) });
      expect((listed.body as { items: ApiCommand[] }).items.filter((c) => c.name === 'nothing')).toEqual([]);
    },
  },
  {
    name: 'POST a command to a missing gateway: 404',
    method: 'POST',
    path: `/${CUSTOMER}/gateways/${MISSING}/commands`,
    auth: asAdmin,
    json: { name: 'x' },
    status: 404,
    body: error('Not Found', `Gateway "${MISSING}" does not exist: see GET /${CUSTOMER}/gateways.`),
  },
  { name: 'GET a missing command: 404', method: 'GET', path: `/${CUSTOMER}/commands/${MISSING}`, auth: asAdmin, status: 404, body: error('Not Found', `Command "${MISSING}" does not exist.`) },
  { name: 'cancel a missing command: 404', method: 'POST', path: `/${CUSTOMER}/commands/${MISSING}/cancel`, auth: asAdmin, status: 404, body: error('Not Found', `Command "${MISSING}" does not exist.`) },
  {
    name: 'GET the commands of a missing gateway: 404',
    method: 'GET',
    path: `/${CUSTOMER}/gateways/${MISSING}/commands`,
    auth: asAdmin,
    status: 404,
    body: error('Not Found', `Gateway "${MISSING}" does not exist.`),
  },
  {
    name: 'a USER_ROLE user lacks gateway.command: 403',
    method: 'POST',
    path: (w) => `/${CUSTOMER}/gateways/${w.gateways[0]}/commands`,
    auth: asUser,
    json: { name: 'x' },
    status: 403,
    body: lacks('gateway.command'),
  },
  {
    name: 'another customer\'s command is not found',
    method: 'GET',
    path: async (w) => `/${OTHER_CUSTOMER}/commands/${(await commandOf(w, 0)).command_id}`,
    auth: (w) => `Bearer ${w.otherAdmin.token}`,
    status: 404,
    fields: { title: 'Not Found' },
  },
  { name: 'no Authorization header: 401', method: 'GET', path: `/${CUSTOMER}/commands/${MISSING}`, status: 401, body: NO_HEADER },
];

scenarioTable('commands API', setup, scenarios);

