// While old events are being deleted (docs/retention.md), the service goes on: a gateway publishes
// over MQTT with TLS and every acknowledged event is stored (those older than the cutoff then go
// with the rest), its connectivity follows its messages, and the event list, job analysis and
// exports answer as before. Both stores.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DAY_MS } from '../../src/domain/retention.js';
import type { BatchProgress } from '../../src/retention/sweeper.js';
import { eventRow } from '../helpers/events.js';
import { GatewayClients, provisionGateway, type TestGateway } from '../helpers/mqtt.js';
import { storedEvents } from '../helpers/store-rows.js';
import { CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';

const OLD = 5000;
const PUBLISHED = 200;

let t: TestServer;
let gateway: TestGateway;
const clients = new GatewayClients();
/** Batches the pass ran, in order; and a gate that holds it before its end until the checks are done. */
const batches: BatchProgress[] = [];
let started!: () => void;
const deletionStarted = new Promise<void>((resolve) => (started = resolve));
let checksDone!: () => void;
const checked = new Promise<void>((resolve) => (checksDone = resolve));

beforeAll(async () => {
  t = await startTestServer({
    // Short pauses: a pass of many batches over a small table.
    retention: {
      minPauseMs: 1,
      onBatch: async (progress) => {
        batches.push(progress);
        if (progress.batch === 1) started();
        // Never finish before the checks did: the last batches wait for them.
        if (progress.total >= OLD - 500) await checked;
      },
    },
  });
  gateway = await provisionGateway(t);
});
afterAll(async () => {
  await clients.endAll();
  await t?.close();
});

describe('while old events are deleted', () => {
  it('ingest acknowledges and stores, connectivity, the event list, job analysis and exports work; the old ones go', async () => {
    const now = Date.now();
    const cutoff = now - 30 * DAY_MS;
    const base = now - 3_600_000;
    const old = Array.from({ length: OLD }, (_, i) => eventRow({ created: cutoff - 1 - i, gateway_id: gateway.id, scan_code: `OLD-${i}` }));
    const scans = ['JS-1', 'JE-1', 'JS-2', 'JE-2'].map((code, i) => eventRow({ created: base + i * 10, gateway_id: gateway.id, scan_code: code }));
    await t.server.ctx.store.events.insert(CUSTOMER, [...old, ...scans]);
    const job = await t.admin.post<{ job_config_id: string }>(`/${CUSTOMER}/job-configs`, { job_name: 'picking', start_barcode: 'JS', end_barcode: 'JE', gateway_ids: [gateway.id] });
    expect((await t.admin.get<{ connectivity_status: string }>(`/${CUSTOMER}/gateways/${gateway.id}`)).connectivity_status).toBe('REGISTERING');

    // serve runs the batches in the ingest writer thread (between its commits), not on its own store.
    const onServerStore = vi.spyOn(t.server.ctx.store.retention, 'deleteEventsBefore');
    await t.admin.put(`/${CUSTOMER}/retention`, { events_days: 30 });
    await deletionStarted;
    const before = batches.length;

    // MQTT over TLS with the certificate the service issued: young events, and old ones the pass must take too.
    const mqtt = await clients.connect(gateway);
    const published = Array.from({ length: PUBLISHED }, (_, i) => ({
      id: randomUUID(),
      type: 'scan',
      scan_code: `LIVE-${i}`,
      created: i % 10 === 0 ? cutoff - 5_000 - i : now - 60_000 + i,
    }));
    const sentAt = Date.now();
    for (let i = 0; i < PUBLISHED; i += 20) {
      await Promise.all(published.slice(i, i + 20).map((event) => mqtt.publishAsync(gateway.topic, JSON.stringify(event), { qos: 1 })));
    }

    const record = await t.server.ctx.store.gateways.byId(CUSTOMER, gateway.id);
    expect(record!.last_message).toBeGreaterThanOrEqual(sentAt);
    expect((await t.admin.get<{ connectivity_status: string }>(`/${CUSTOMER}/gateways/${gateway.id}`)).connectivity_status).toBe('ACTIVE');
    const page = await t.admin.get<{ items: { id: string }[] }>(`/${CUSTOMER}/events`, { start_time_millis: base, end_time_millis: base + 100 });
    expect(page.items.map((item) => item.id)).toEqual([...scans].reverse().map((row) => row.id));
    expect(await t.admin.post(`/${CUSTOMER}/job-analysis`, { job_config_id: job.job_config_id, start_time: base, end_time: base + 100 })).toEqual({
      results: [
        {
          gateway_id: gateway.id,
          jobs: [
            { start_time: base, end_time: base + 10, start_event_id: scans[0]!.id, end_event_id: scans[1]!.id },
            { start_time: base + 20, end_time: base + 30, start_event_id: scans[2]!.id, end_event_id: scans[3]!.id },
          ],
        },
      ],
    });
    const { download_link } = await t.admin.get<{ download_link: string }>(`/${CUSTOMER}/events/export`, { start_time_millis: base, end_time_millis: base + 100 });
    const csv = (await (await fetch(download_link)).text()).trim().split('\r\n');
    expect(csv.slice(1).map((line) => line.split(',')[0])).toEqual(scans.map((row) => row.id));
    // The pass went on meanwhile (it is held only before its end).
    expect(batches.length).toBeGreaterThan(before);
    checksDone();
    await t.server.ctx.retention.idle();
    // The pass went through the old events in (created, id) order: old ones that arrived behind
    // its position are the next pass's.
    await t.server.ctx.retention.run();

    const pass = (await t.admin.get<{ last_deletion: { deleted: number; cutoff: number } }>(`/${CUSTOMER}/retention`)).last_deletion;
    // Every seeded old event and every old one published during the pass; nothing else.
    const oldPublished = published.filter((event) => event.created < pass.cutoff);
    expect(oldPublished).toHaveLength(PUBLISHED / 10);
    expect(batches.reduce((sum, batch) => sum + batch.deleted, 0)).toBe(OLD + oldPublished.length);
    const stored = (await storedEvents(t, CUSTOMER)).map((row) => row[0] as string).sort();
    const young = [...scans.map((row) => row.id), ...published.filter((event) => event.created >= pass.cutoff).map((event) => event.id)].sort();
    expect(stored).toEqual(young);
    expect(t.server.broker.ingest).toMatchObject({ events: PUBLISHED, invalid: 0, failed: 0 });
    expect(onServerStore).not.toHaveBeenCalled();
    // A pass of many small batches: slow on a busy machine, whatever the store.
  }, 120_000);
});
