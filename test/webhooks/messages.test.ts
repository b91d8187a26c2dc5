// The batches of webhooks (src/webhooks/messages.ts): those of the same event types at the same
// position share one batch, read and encoded once (SharedBatches); other types or another
// position read their own; the body is the UTF-8 JSON the Standard Webhooks message says.
import { describe, expect, it } from 'vitest';
import type { StreamPosition } from '../../src/domain/stream-cursor.js';
import type { CommittedEvent, EventLogRead, WebhookDelivery, WebhookRecord } from '../../src/store/ports/index.js';
import { storedValues, type EventRow } from '../../src/domain/events.js';
import { CommittedPacker, commitBuffer, committedEvent, customerEvents } from '../../src/store/shared/committed-events.js';
import { SharedBatches, messageBody, nextBatch } from '../../src/webhooks/messages.js';

/** 1,200 events, every third one telemetry; counts the reads. */
const events: CommittedEvent[] = Array.from({ length: 1_200 }, (_, i) => ({
  position: [i + 1],
  json: `{"id":"e${i + 1}","type":"${i % 3 === 2 ? 'telemetry' : 'scan'}","scan_code":"é"}`,
  gatewayId: null,
}));
let reads = 0;
const log = {
  async after(_customerId: string, after: StreamPosition, limit: number): Promise<EventLogRead> {
    reads++;
    const read = events.filter((e) => e.position[0]! > after[0]!).slice(0, limit);
    const more = read.length === limit;
    return { events: read, reached: more ? read[read.length - 1]!.position : [events.length], more };
  },
};

function webhook(id: string, event_types: string[], cursor: StreamPosition = [0]): WebhookRecord {
  return { id, customer_id: 'c', url: 'http://x/', event_types, description: '', enabled: true, secret: 'whsec_', previous_secret: null, previous_until: null, created: 0, last_updated: 0, cursor, failing_since: null, disabled_reason: null };
}

describe('nextBatch with SharedBatches', () => {
  it('builds the batch of one position and types once for every webhook that reaches it', async () => {
    const shared = new SharedBatches();
    reads = 0;
    const batches = await Promise.all(['a', 'b', 'c'].map(async (id) => nextBatch(log, webhook(id, ['event.scan', 'event.telemetry']), [0], 1, shared)));
    const first = await nextBatch(log, webhook('a', ['event.scan', 'event.telemetry']), [0], 1, shared);
    expect(reads).toBe(1);
    for (const batch of [...batches, first]) {
      expect(batch.data).toBe(batches[0]!.data);
      expect(batch.delivery?.upto).toEqual([500]);
    }
    // Each webhook's own delivery: its id, its webhook.
    expect(new Set(batches.map((b) => b.delivery!.id)).size).toBe(3);
    expect(batches.map((b) => b.delivery!.webhook_id)).toEqual(['a', 'b', 'c']);
    expect(JSON.parse(Buffer.concat(batches[0]!.data!).toString('utf8'))).toEqual(events.slice(0, 500).map((e) => JSON.parse(e.json)));
  });

  it('reads its own batch for other event types or another position', async () => {
    const shared = new SharedBatches();
    reads = 0;
    const both = await nextBatch(log, webhook('a', ['event.scan', 'event.telemetry']), [0], 1, shared);
    const scans = await nextBatch(log, webhook('b', ['event.scan']), [0], 1, shared);
    const later = await nextBatch(log, webhook('c', ['event.scan', 'event.telemetry'], [500]), [500], 1, shared);
    expect(reads).toBe(3);
    expect(scans.delivery?.upto).toEqual([500]);
    expect((JSON.parse(Buffer.concat(scans.data!).toString('utf8')) as { type: string }[]).every((e) => e.type === 'scan')).toBe(true);
    expect(later.delivery?.upto).toEqual([1_000]);
    expect(both.data).not.toBe(later.data);
  });
});

it('messageBody: the message JSON around the batch, as UTF-8 bytes', async () => {
  const batch = await nextBatch(log, webhook('a', ['event.scan'], [1_197]), [1_197], 0);
  const delivery = { ...batch.delivery!, attempts: 0, status: 'PENDING', response_status: null, latency_ms: null, next_attempt: null } as WebhookDelivery;
  const body = await messageBody(log, webhook('a', ['event.scan'], [1_197]), delivery, batch.data);
  expect(JSON.parse(Buffer.concat(body).toString('utf8'))).toEqual({ type: 'event.batch', timestamp: '1970-01-01T00:00:00.000Z', data: [{ id: 'e1198', type: 'scan', scan_code: 'é' }, { id: 'e1199', type: 'scan', scan_code: 'é' }] });
  // Read again from the log (a retry): the same bytes.
  expect(Buffer.concat(await messageBody(log, webhook('a', ['event.scan'], [1_197]), delivery))).toEqual(Buffer.concat(body));
});

it('a batch of events handed over by commits is slices of their bytes, one per run of a commit, between events read from the store', async () => {
  const packer = new CommittedPacker();
  const commit = [
    ['c', 3, '{"id":"e3","type":"scan","scan_code":"é"}'],
    ['c', 4, '{"id":"e4","type":"scan","scan_code":"😀"}'],
    ['other', 5, '{"id":"x5","type":"scan"}'],
    ['c', 6, '{"id":"e6","type":"telemetry"}'],
    ['c', 7, '{"id":"e7","type":"scan"}'],
  ] as const;
  // Stored rows whose JSON is the text above.
  for (const [customer, seq, json] of commit) packer.add(storedValues(customer, JSON.parse(json) as EventRow), seq);
  const batch = structuredClone(packer.packed());
  const utf8 = commitBuffer(batch);
  const handed = [...customerEvents(batch, 'c', 0)].map((i) => committedEvent(batch, utf8, i));
  const stored = (seq: number): CommittedEvent => ({ position: [seq], json: `{"id":"e${seq}","type":"scan"}`, gatewayId: null });
  const all = [stored(1), stored(2), ...handed, stored(8)];
  const reader = { after: async (): Promise<EventLogRead> => ({ events: all, reached: [8], more: false }) };
  const scansAndTelemetry = await nextBatch(reader, webhook('a', ['event.scan', 'event.telemetry']), [0], 0);
  const bytes = handed[0]!.utf8!;
  // The stored events joined, then e3..e4 and e6..e7 (another customer's event between them), then e8.
  expect(scansAndTelemetry.data!.map((piece) => piece.toString('utf8'))).toEqual([
    '[', '{"id":"e1","type":"scan"},{"id":"e2","type":"scan"}', ',', `${commit[0][2]},${commit[1][2]}`, ',', `${commit[3][2]},${commit[4][2]}`, ',', '{"id":"e8","type":"scan"}', ']',
  ]);
  expect(scansAndTelemetry.data![3]!.buffer).toBe(bytes.buffer);
  // Scans only: the telemetry event between cuts the run.
  const scans = await nextBatch(reader, webhook('b', ['event.scan']), [0], 0);
  expect(JSON.parse(Buffer.concat(scans.data!).toString('utf8'))).toEqual([1, 2, 3, 4, 7, 8].map((n) => expect.objectContaining({ id: `e${n}` })));
  expect(scans.data!.length).toBe(9);
});
