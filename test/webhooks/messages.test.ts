// The batches of webhooks (src/webhooks/messages.ts): those of the same event types at the same
// position share one batch, read and encoded once (SharedBatches); other types or another
// position read their own; the body is the UTF-8 JSON the Standard Webhooks message says.
import { describe, expect, it } from 'vitest';
import type { StreamPosition } from '../../src/domain/stream-cursor.js';
import type { CommittedEvent, EventLogRead, WebhookDelivery, WebhookRecord } from '../../src/store/ports/index.js';
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
    expect(JSON.parse(batches[0]!.data!.toString('utf8'))).toEqual(events.slice(0, 500).map((e) => JSON.parse(e.json)));
  });

  it('reads its own batch for other event types or another position', async () => {
    const shared = new SharedBatches();
    reads = 0;
    const both = await nextBatch(log, webhook('a', ['event.scan', 'event.telemetry']), [0], 1, shared);
    const scans = await nextBatch(log, webhook('b', ['event.scan']), [0], 1, shared);
    const later = await nextBatch(log, webhook('c', ['event.scan', 'event.telemetry'], [500]), [500], 1, shared);
    expect(reads).toBe(3);
    expect(scans.delivery?.upto).toEqual([500]);
    expect((JSON.parse(scans.data!.toString('utf8')) as { type: string }[]).every((e) => e.type === 'scan')).toBe(true);
    expect(later.delivery?.upto).toEqual([1_000]);
    expect(both.data).not.toBe(later.data);
  });
});

it('messageBody: the message JSON around the batch, as UTF-8 bytes', async () => {
  const batch = await nextBatch(log, webhook('a', ['event.scan'], [1_197]), [1_197], 0);
  const delivery = { ...batch.delivery!, attempts: 0, status: 'PENDING', response_status: null, latency_ms: null, next_attempt: null } as WebhookDelivery;
  const body = await messageBody(log, webhook('a', ['event.scan'], [1_197]), delivery, batch.data);
  expect(JSON.parse(body.toString('utf8'))).toEqual({ type: 'event.batch', timestamp: '1970-01-01T00:00:00.000Z', data: [{ id: 'e1198', type: 'scan', scan_code: 'é' }, { id: 'e1199', type: 'scan', scan_code: 'é' }] });
  // Read again from the log (a retry): the same bytes.
  expect(await messageBody(log, webhook('a', ['event.scan'], [1_197]), delivery)).toEqual(body);
});
