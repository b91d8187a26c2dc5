// The job tracker and the kinds built on it (docs/alerts.md "Jobs"): an end barcode that closes a
// job sends one job.completed; a job open for after_seconds opens one job_open_too_long alert,
// resolved when it ends; a station that talks but does not scan for after_seconds opens one
// station_silent alert, resolved at its next scan or when it goes quiet. The clock of serve is
// moved forward (within the 5 minutes a Standard Webhooks receiver accepts) instead of waiting.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { error } from '../helpers/scenarios.js';
import { CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';
import { connectGateway, provisionGateway } from '../helpers/mqtt.js';
import { insertEvents, insertGateway, selectRows } from '../helpers/store-rows.js';
import { scanRow } from '../helpers/events.js';
import { until } from '../helpers/until.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { call } from '../helpers/http.js';
import { bearer } from '../helpers/users.js';
import { randomUUID } from 'node:crypto';

describe('jobs and silent stations evaluated by serve', () => {
  let t: TestServer;
  let skew = 0;
  const now = () => Date.now() + skew;
  const receiver = new WebhookReceiver();
  const types = () => receiver.messages.map((m) => m.body.type);
  const scan = (gatewayId: string, code: string, created = now()) => {
    const id = randomUUID();
    return { id, insert: () => insertEvents(t, CUSTOMER, [scanRow(id, gatewayId, created, code)]) };
  };
  /** The tracker reads from the head when it starts: scans before that are not its business. */
  const trackerStarted = () => until(() => selectRows(t, 'SELECT customer_id FROM alert_trackers'), (rows) => rows.length === 1);

  beforeAll(async () => {
    await receiver.start();
    t = await startTestServer({ webhookAllowLoopback: true, alertIntervalMs: 50, clock: now, webhooks: { retryBaseMs: 20, retryMaxMs: 100 } });
    const { secret } = await t.admin.post<{ secret: string }>(`/${CUSTOMER}/webhooks`, { url: receiver.url, event_types: ['job.completed', 'alert.opened', 'alert.resolved'] });
    receiver.secrets = [secret];
  });
  afterAll(async () => {
    await t?.close();
    await receiver.stop();
  });

  it('job.completed once per end barcode; job_open_too_long opens after after_seconds and resolves when the job ends', async () => {
    const dock1 = await insertGateway(t, CUSTOMER, 'dock-1');
    const dock2 = await insertGateway(t, CUSTOMER, 'dock-2');
    const config = await t.admin.post<{ job_config_id: string }>(`/${CUSTOMER}/job-configs`, { job_name: 'picking', start_barcode: 'START', end_barcode: 'END', gateway_ids: [dock1, dock2] });
    const rule = await t.admin.post<{ rule_id: string }>(`/${CUSTOMER}/alert-rules`, { kind: 'job_open_too_long', job_config_id: config.job_config_id, after_seconds: 60 });
    expect(rule).toEqual({ rule_id: expect.any(String), kind: 'job_open_too_long', job_config_id: config.job_config_id, after_seconds: 60, created: expect.any(Number) });
    await trackerStarted();

    const at = now();
    const start1 = scan(dock1, 'START-1', at - 2_000);
    const end1 = scan(dock1, 'END-1', at - 1_000);
    const start2 = scan(dock2, 'START-2', now());
    await start1.insert();
    await scan(dock1, 'ITEM-9').insert();
    await end1.insert();
    await start2.insert();
    await receiver.waitFor(() => types().length === 1);
    expect(receiver.messages[0]!.body.data).toEqual({
      job_config_id: config.job_config_id,
      job_name: 'picking',
      gateway_id: dock1,
      start_time: at - 2_000,
      end_time: at - 1_000,
      start_event_id: start1.id,
      end_event_id: end1.id,
    });

    // dock-2's job has been open for a minute.
    skew += 61_000;
    await receiver.waitFor(() => types().length === 2);
    const opened = receiver.messages[1]!.body;
    expect(opened.type).toBe('alert.opened');
    expect(opened.data).toMatchObject({ rule_id: rule.rule_id, kind: 'job_open_too_long', subject: { type: 'gateway', id: dock2 }, state: 'OPEN' });
    expect((opened.data as { details: unknown }).details).toEqual({
      job_config_id: config.job_config_id,
      job_name: 'picking',
      start_event_id: start2.id,
      opened_at: expect.any(Number),
      after_seconds: 60,
    });

    // Its end: the job's message, then the alert resolves. A start that replaces an open one on
    // dock-1 completes nothing; the end after it completes the second start's job.
    const end2 = scan(dock2, 'END-2');
    await end2.insert();
    await receiver.waitFor(() => types().length === 4);
    const restart = scan(dock1, 'START-4');
    const end4 = scan(dock1, 'END-4');
    await scan(dock1, 'START-3').insert();
    await restart.insert();
    await end4.insert();
    await receiver.waitFor(() => types().length === 5);
    expect(types()).toEqual(['job.completed', 'alert.opened', 'job.completed', 'alert.resolved', 'job.completed']);
    expect(receiver.messages[2]!.body.data).toMatchObject({ gateway_id: dock2, start_event_id: start2.id, end_event_id: end2.id });
    expect(receiver.messages[4]!.body.data).toMatchObject({ gateway_id: dock1, start_event_id: restart.id, end_event_id: end4.id });
    const alerts = await t.admin.get<{ items: { rule_id: string; state: string }[] }>(`/${CUSTOMER}/alerts`);
    expect(alerts.items.filter((a) => a.rule_id === rule.rule_id).map((a) => a.state)).toEqual(['RESOLVED']);
    await t.admin.delete(`/${CUSTOMER}/alert-rules/${rule.rule_id}`);
  });

  it('station_silent opens while a station is connected without scanning, and resolves at its next scan or when it disconnects', async () => {
    const press = await provisionGateway(t, { name: 'press-1' });
    const rule = await t.admin.post<{ rule_id: string }>(`/${CUSTOMER}/alert-rules`, { kind: 'station_silent', gateway_ids: [press.id], after_seconds: 30 });
    const ofRule = () => receiver.messages.filter((m) => (m.body.data as { rule_id?: string }).rule_id === rule.rule_id);
    const presence = () => t.server.ctx.store.presence.connected();
    await trackerStarted();

    const client = await connectGateway(press);
    const connected = await until(presence, (map) => map.has(press.id));
    const since = connected.get(press.id)!;
    expect(since).toBeGreaterThan(now() - 5_000);
    expect(since).toBeLessThanOrEqual(now());
    skew += 31_000;
    await receiver.waitFor(() => ofRule().length === 1);
    expect(ofRule()[0]!.body.data).toMatchObject({
      kind: 'station_silent',
      subject: { type: 'gateway', id: press.id },
      state: 'OPEN',
      details: { gateway_name: 'press-1', last_scan: null, connected_since: since, after_seconds: 30 },
    });

    // A scan over MQTT resolves it; 31 s more of silence while connected opens it again.
    const item = now();
    await client.publishAsync(press.topic, JSON.stringify({ id: randomUUID(), type: 'scan', scan_code: 'ITEM-1', device_id: 'ring-1', created: item }), { qos: 1 });
    await receiver.waitFor(() => ofRule().length === 2);
    skew += 31_000;
    await receiver.waitFor(() => ofRule().length === 3);
    expect(ofRule()[2]!.body.data).toMatchObject({ state: 'OPEN', details: { gateway_name: 'press-1', last_scan: item, connected_since: since, after_seconds: 30 } });

    // Disconnected: no longer silent while connected (gateway_offline's business).
    await client.endAsync();
    await until(presence, (map) => !map.has(press.id));
    await receiver.waitFor(() => ofRule().length === 4);
    expect(ofRule().map((m) => (m.body.data as { state: string }).state)).toEqual(['OPEN', 'RESOLVED', 'OPEN', 'RESOLVED']);
    const alerts = await t.admin.get<{ items: { rule_id: string; state: string }[] }>(`/${CUSTOMER}/alerts`);
    expect(alerts.items.filter((a) => a.rule_id === rule.rule_id).map((a) => a.state)).toEqual(['RESOLVED', 'RESOLVED']);
  });

  it('station_silent counts the silence from the connection: a station that just connected is not silent, however old the rule', async () => {
    const [marker, station] = [await provisionGateway(t, { name: 'press-2' }), await provisionGateway(t, { name: 'press-3' })];
    const ruleOf = async (id: string) => (await t.admin.post<{ rule_id: string }>(`/${CUSTOMER}/alert-rules`, { kind: 'station_silent', gateway_ids: [id], after_seconds: 30 })).rule_id;
    const [markerRule, stationRule] = [await ruleOf(marker.id), await ruleOf(station.id)];
    const states = (ruleId: string) => receiver.messages.filter((m) => (m.body.data as { rule_id?: string }).rule_id === ruleId).map((m) => (m.body.data as { state: string }).state);
    const connectedAt = async (gateway: typeof marker) => {
      const client = await connectGateway(gateway);
      const since = (await until(() => t.server.ctx.store.presence.connected(), (map) => map.has(gateway.id))).get(gateway.id)!;
      return { client, since };
    };

    const first = await connectedAt(marker);
    skew += 20_000;
    const second = await connectedAt(station);
    // 35 s after both rules: the marker has been connected that long, the station 15 s.
    skew += 15_000;
    await receiver.waitFor(() => states(markerRule).length === 1);
    // A scan resolves the marker's alert in a later round: every round before it has ended.
    await first.client.publishAsync(marker.topic, JSON.stringify({ id: randomUUID(), type: 'scan', scan_code: 'ITEM-2', device_id: 'ring-2' }), { qos: 1 });
    await receiver.waitFor(() => states(markerRule).length === 2);
    expect(states(stationRule)).toEqual([]);

    skew += 16_000;
    await receiver.waitFor(() => states(stationRule).length === 1);
    expect(receiver.messages.find((m) => (m.body.data as { rule_id?: string }).rule_id === stationRule)!.body.data).toMatchObject({
      state: 'OPEN',
      details: { gateway_name: 'press-3', last_scan: null, connected_since: second.since, after_seconds: 30 },
    });
    await Promise.all([first.client.endAsync(), second.client.endAsync()]);
    await receiver.waitFor(() => states(stationRule).length === 2);
    for (const id of [markerRule, stationRule]) await t.admin.delete(`/${CUSTOMER}/alert-rules/${id}`);
  });

  it('refuses rule bodies without what the kind needs, or naming what the customer does not have (400)', async () => {
    const post = (json: object) => call(t.url, 'POST', `/${CUSTOMER}/alert-rules`, { authorization: bearer(t.adminToken), json });
    expect(await post({ kind: 'job_open_too_long', after_seconds: 60 })).toMatchObject({
      status: 400,
      body: error('Bad Request', 'Body field "job_config_id" is required for a job_open_too_long rule (it takes job_config_id, after_seconds).'),
    });
    expect(await post({ kind: 'job_open_too_long', job_config_id: 'no-such-config', after_seconds: 60 })).toMatchObject({
      status: 400,
      body: error('Bad Request', `Body field "job_config_id" is "no-such-config", which is no job configuration of the customer: GET /${CUSTOMER}/job-configs lists them.`),
    });
    expect(await post({ kind: 'station_silent', after_seconds: 60 })).toMatchObject({
      status: 400,
      body: error('Bad Request', 'Body field "gateway_ids" is required for a station_silent rule (it takes gateway_ids, after_seconds).'),
    });
    expect(await post({ kind: 'station_silent', gateway_ids: ['dock-1'], after_seconds: 60, below_percent: 5 })).toMatchObject({
      status: 400,
      body: error('Bad Request', 'Body field "below_percent" does not belong to a station_silent rule: it takes gateway_ids, after_seconds.'),
    });
  });
});
