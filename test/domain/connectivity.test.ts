import { describe, expect, it } from 'vitest';
import { selectRows } from '../helpers/store-rows.js';
import { ACTIVE_WINDOW_MS, connectivityStatus, type ConnectivityFacts } from '../../src/domain/connectivity.js';
import { T0, useFixture } from '../helpers/gateways.js';
import { call } from '../helpers/http.js';

const HOUR = 60 * 60 * 1000;

describe('connectivityStatus', () => {
  const cases: { name: string; facts: ConnectivityFacts; now: number; status: string }[] = [
    { name: 'created, nothing else', facts: { provisioning_prepared: null, last_message: null }, now: T0, status: 'NOT_REGISTERED' },
    { name: 'prepared, no message yet', facts: { provisioning_prepared: T0, last_message: null }, now: T0 + 100 * HOUR, status: 'REGISTERING' },
    { name: 'message just now', facts: { provisioning_prepared: T0, last_message: T0 }, now: T0, status: 'ACTIVE' },
    { name: 'message exactly 2 h ago', facts: { provisioning_prepared: T0, last_message: T0 }, now: T0 + 2 * HOUR, status: 'ACTIVE' },
    { name: 'message 2 h and 1 ms ago', facts: { provisioning_prepared: T0, last_message: T0 }, now: T0 + 2 * HOUR + 1, status: 'INACTIVE' },
    { name: 'message time ahead of the clock', facts: { provisioning_prepared: T0, last_message: T0 + HOUR }, now: T0, status: 'ACTIVE' },
    { name: 'a message without preparation (imported data)', facts: { provisioning_prepared: null, last_message: T0 }, now: T0 + 3 * HOUR, status: 'INACTIVE' },
  ];
  it.each(cases)('$name: $status', ({ facts, now, status }) => expect(connectivityStatus(facts, now)).toBe(status));

  it('the ACTIVE window is two hours', () => expect(ACTIVE_WINDOW_MS).toBe(2 * HOUR));
});

describe('connectivity_status through the API, with an injected clock', () => {
  const { fixture, clock } = useFixture();

  it('moves NOT_REGISTERED -> REGISTERING -> ACTIVE -> INACTIVE -> ACTIVE', async () => {
    const f = fixture();
    const status = async () => {
      // IdTokens live an hour on the same clock: log in afresh at each step.
      const token = await f.t.login('admin@example.com', 'admin-password-123');
      const gateway = await call(f.t.url, 'GET', `/acme/gateways/${id}`, { token });
      const listed = await call(f.t.url, 'GET', '/acme/gateways', { token });
      const inList = (listed.body as { items: { id: string; connectivity_status: string }[] }).items.find((g) => g.id === id)!.connectivity_status;
      expect(inList).toBe((gateway.body as { connectivity_status: string }).connectivity_status);
      return inList;
    };
    // Ingest (the MQTT side) records message times in gateways.last_message; here it is set directly.
    const messageAt = (at: number) => selectRows(f.t, 'UPDATE gateways SET last_message = ? WHERE id = ?', at, id);

    const created = await call(f.t.url, 'POST', '/acme/gateways', { token: f.tokens.admin, json: { name: 'G', usecase: 'u', station: 's' } });
    const id = (created.body as { id: string }).id;
    expect((created.body as { connectivity_status: string }).connectivity_status).toBe('NOT_REGISTERED');
    expect(await status()).toBe('NOT_REGISTERED');

    const prepared = await call(f.t.url, 'POST', `/acme/gateways/${id}/prepare-provisioning`, { token: f.tokens.admin });
    expect(await status()).toBe('REGISTERING');
    const device = await call(f.t.url, 'POST', '/provisioning', { json: { token: (prepared.body as { token: string }).token } });
    expect((device.body as { gateway: { connectivity_status: string } }).gateway.connectivity_status).toBe('REGISTERING');
    clock.now = T0 + 5 * HOUR;
    expect(await status()).toBe('REGISTERING');

    await messageAt(clock.now);
    expect(await status()).toBe('ACTIVE');
    clock.now += 2 * HOUR;
    expect(await status()).toBe('ACTIVE');
    clock.now += 1;
    expect(await status()).toBe('INACTIVE');
    await messageAt(clock.now);
    expect(await status()).toBe('ACTIVE');
  });
});
