// Alert rules and alerts (docs/alerts.md): a gateway_offline rule opens one alert when a gateway
// has been silent for after_seconds and resolves it once at its next message; both reach the
// webhooks that take alert.opened / alert.resolved, signed, and GET /alerts lists them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayOffline } from '../../src/domain/alerts.js';
import { error } from '../helpers/scenarios.js';
import { CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';
import { insertEvents, insertGateway, selectRows } from '../helpers/store-rows.js';
import { eventRow } from '../helpers/events.js';
import { until } from '../helpers/until.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { call } from '../helpers/http.js';
import { bearer } from '../helpers/users.js';
import { openSse } from '../helpers/sse.js';

describe('gatewayOffline', () => {
  it('holds from after_seconds plus the 8 s resolution of the stored last message, never before', () => {
    expect([59_999, 67_999, 68_000, 3_600_000].map((silent) => gatewayOffline(1_000_000, 1_000_000 + silent, 60))).toEqual([false, false, true, true]);
    expect(gatewayOffline(null, 10_000_000, 60)).toBe(false);
  });
});

describe('alert rules evaluated by serve', () => {
  let t: TestServer;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    await receiver.start();
    t = await startTestServer({ webhookAllowLoopback: true, alertIntervalMs: 50, webhooks: { retryBaseMs: 20, retryMaxMs: 100 } });
  });
  afterAll(async () => {
    await t?.close();
    await receiver.stop();
  });

  it('opens one alert that reaches the webhook, and resolves it once at the next message', async () => {
    const { secret } = await t.admin.post<{ secret: string }>(`/${CUSTOMER}/webhooks`, { url: receiver.url, event_types: ['alert.opened', 'alert.resolved'] });
    receiver.secrets = [secret];
    const dock = await insertGateway(t, CUSTOMER, 'dock-1');
    const quiet = await insertGateway(t, CUSTOMER, 'dock-2');
    const now = Date.now();
    await selectRows(t, 'UPDATE gateways SET last_message = ? WHERE id = ?', now - 71_000, dock);
    await selectRows(t, 'UPDATE gateways SET last_message = ? WHERE id = ?', now - 30_000, quiet);
    // A live stream that asked for alerts, and one that did not.
    const withAlerts = await openSse(t.url, `/${CUSTOMER}/events/stream?alerts=true`, { token: t.adminToken });
    const without = await openSse(t.url, `/${CUSTOMER}/events/stream`, { token: t.adminToken });
    const rule = await t.admin.post<{ rule_id: string }>(`/${CUSTOMER}/alert-rules`, { kind: 'gateway_offline', after_seconds: 60 });
    expect(rule).toEqual({ rule_id: expect.any(String), kind: 'gateway_offline', after_seconds: 60, created: expect.any(Number) });

    await receiver.waitFor((r) => r.messages.some((m) => m.body.type === 'alert.opened'));
    const opened = receiver.messages.find((m) => m.body.type === 'alert.opened')!.body.data as { alert_id: string };
    expect(opened).toEqual({
      alert_id: expect.any(String),
      rule_id: rule.rule_id,
      kind: 'gateway_offline',
      subject: { type: 'gateway', id: dock },
      state: 'OPEN',
      opened: expect.any(Number),
      details: { gateway_name: 'dock-1', last_message: now - 71_000, after_seconds: 60 },
    });
    const listed = await t.admin.get<{ items: { alert_id: string; state: string }[] }>(`/${CUSTOMER}/alerts?state=OPEN`);
    expect(listed.items.map((a) => [a.alert_id, a.state])).toEqual([[opened.alert_id, 'OPEN']]);

    await selectRows(t, 'UPDATE gateways SET last_message = ? WHERE id = ?', Date.now(), dock);
    await receiver.waitFor((r) => r.messages.some((m) => m.body.type === 'alert.resolved'));
    const resolved = receiver.messages.find((m) => m.body.type === 'alert.resolved')!.body.data;
    expect(resolved).toMatchObject({ alert_id: opened.alert_id, state: 'RESOLVED', resolved: expect.any(Number) });
    const all = await until(() => t.admin.get<{ items: { state: string }[] }>(`/${CUSTOMER}/alerts`), (list) => list.items.length === 1 && list.items[0]!.state === 'RESOLVED');
    expect(all.items).toHaveLength(1);
    expect(receiver.messages.map((m) => m.body.type)).toEqual(['alert.opened', 'alert.resolved']);
    // The same two on the stream that asked, as `event: alert` frames without an id; nothing on the other.
    const alertFrames = () => withAlerts.items.filter((item) => item.kind === 'event' && item.event === 'alert');
    await withAlerts.until(() => alertFrames().length === 2, 'two alert frames');
    expect(alertFrames().map((item) => item.kind === 'event' && [item.id, (JSON.parse(item.data) as { alert_id: string; state: string }).state])).toEqual([
      [undefined, 'OPEN'],
      [undefined, 'RESOLVED'],
    ]);
    expect(without.items.filter((item) => item.kind === 'event')).toEqual([]);
    withAlerts.close();
    without.close();
  });

  it('device_low_battery: opens below the threshold, stays open just above it, resolves 5 points above', async () => {
    receiver.messages.length = 0;
    const rule = await t.admin.post<{ rule_id: string }>(`/${CUSTOMER}/alert-rules`, { kind: 'device_low_battery', below_percent: 20 });
    const battery = async (percent: number) => insertEvents(t, CUSTOMER, [eventRow({ created: Date.now(), device_id: 'ring-7', device_battery: percent })]);
    await battery(12);
    await receiver.waitFor((r) => r.messages.some((m) => m.body.type === 'alert.opened'));
    expect(receiver.messages[0]!.body.data).toMatchObject({ rule_id: rule.rule_id, kind: 'device_low_battery', subject: { type: 'device', id: 'ring-7' }, details: { battery: 12, below_percent: 20 } });
    await battery(22);
    const stillOpen = await t.admin.get<{ items: { rule_id: string; state: string }[] }>(`/${CUSTOMER}/alerts?state=OPEN`);
    expect(stillOpen.items.filter((a) => a.rule_id === rule.rule_id)).toHaveLength(1);
    await battery(30);
    await receiver.waitFor((r) => r.messages.some((m) => m.body.type === 'alert.resolved'));
    expect(receiver.messages.map((m) => m.body.type)).toEqual(['alert.opened', 'alert.resolved']);
    expect(await call(t.url, 'POST', `/${CUSTOMER}/alert-rules`, { authorization: bearer(t.adminToken), json: { kind: 'device_low_battery', after_seconds: 60 } })).toMatchObject({
      status: 400,
      body: error('Bad Request', 'Body field "below_percent" is required for a device_low_battery rule (it takes below_percent).'),
    });
  });

  it('a stream with events=false carries the alert frames and no event; events=false alone is refused', async () => {
    const alertsOnly = await openSse(t.url, `/${CUSTOMER}/events/stream?alerts=true&events=false`, { token: t.adminToken });
    const everything = await openSse(t.url, `/${CUSTOMER}/events/stream?alerts=true`, { token: t.adminToken });
    await t.admin.post(`/${CUSTOMER}/alert-rules`, { kind: 'device_low_battery', below_percent: 15 });
    await insertEvents(t, CUSTOMER, [eventRow({ created: Date.now(), device_id: 'ring-9', device_battery: 3 })]);
    const isOpening = (item: (typeof alertsOnly.items)[number]) => item.kind === 'event' && item.event === 'alert' && item.data.includes('"ring-9"');
    await everything.until(() => everything.items.filter(isOpening).length === 2 && everything.events().some((e) => e.id !== undefined), 'the event and the alerts');
    await alertsOnly.until(() => alertsOnly.items.filter(isOpening).length === 2, 'the two alerts');
    // ring-9 opens an alert under this rule and under the one of the test before (below 20): two alert frames, no event.
    expect(alertsOnly.items.filter((item) => item.kind === 'event').map((item) => item.kind === 'event' && [item.event, item.id])).toEqual([
      ['alert', undefined],
      ['alert', undefined],
    ]);
    alertsOnly.close();
    everything.close();
    expect(await call(t.url, 'GET', `/${CUSTOMER}/events/stream?events=false`, { authorization: bearer(t.adminToken) })).toMatchObject({
      status: 400,
      body: error('Bad Request', 'Query "events=false" without "alerts=true" asks for a stream of nothing: add alerts=true for the alerts alone, or leave events out.'),
    });
  });

  it('refuses a rule naming what the customer does not have, and a USER_ROLE caller', async () => {
    const answer = await call(t.url, 'POST', `/${CUSTOMER}/alert-rules`, { authorization: bearer(t.adminToken), json: { kind: 'station_silent', gateway_ids: ['x'], after_seconds: 60 } });
    expect(answer).toMatchObject({ status: 400, body: error('Bad Request', 'Body field "gateway_ids" names "x", which is no gateway of the customer.') });
    const user = await t.createUser('USER_ROLE');
    const refused = await call(t.url, 'POST', `/${CUSTOMER}/alert-rules`, { authorization: bearer(user.token), json: { kind: 'gateway_offline', after_seconds: 60 } });
    expect(refused.status).toBe(403);
    expect((await call(t.url, 'GET', `/${CUSTOMER}/alerts`, { authorization: bearer(user.token) })).status).toBe(200);
  });
});
