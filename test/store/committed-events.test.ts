// The hand-off of a commit's events (src/store/shared/committed-events.ts): stored rows packed
// into one buffer of UTF-8 and typed arrays, moved to the other thread, read back per customer
// exactly as the event log reads them, after a position.
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { expect, it } from 'vitest';
import { storedValues, type EventRow } from '../../src/domain/events.js';
import type { CommittedEvents } from '../../src/domain/ingest.js';
import { CommittedPacker, commitBuffer, committedEvent, customerEvents, transferred } from '../../src/store/shared/committed-events.js';
import { eventJson } from '../../src/store/shared/event-json.js';

/** The packed commit as the server's thread receives it: posted with its buffers moved, as the writer thread does. */
function handedOver(packer: CommittedPacker): { batch: CommittedEvents; leftBehind: number } {
  const packed = packer.packed();
  const { port1, port2 } = new MessageChannel();
  port1.postMessage(packed, transferred(packed));
  const batch = receiveMessageOnPort(port2)!.message as CommittedEvents;
  port1.close();
  // Moved, not copied: the sender's view of the bytes is detached.
  return { batch, leftBehind: packed.utf8.byteLength };
}

const row = (customerId: string, event: Partial<EventRow>) => storedValues(customerId, { id: 'e', class: 'EVENT', type: 'scan', created: 1_700_000_000_000, ...event } as EventRow);

it('gives back the events of each customer after a seq, JSON, position, gateway and type as stored, moved to another thread', () => {
  const packer = new CommittedPacker();
  const rows = [
    row('c1', { id: 'a', scan_code: 'é\u0000"\\', gateway_id: 'g1' }),
    row('c2', { id: 'b' }),
    row('c1', { id: 'c', type: 'telemetry', device_battery: 0.1, device_temperature: -31.25, metrics_worker_steps: 12 }),
    row('c1', { id: 'd', scan_code: '😀 x', scan_duration: 1e-7, gateway_id: 'g2' }),
  ];
  rows.forEach((values, i) => packer.add(values, 11 + i));
  const { batch, leftBehind } = handedOver(packer);
  expect(leftBehind).toBe(0);
  expect([batch.after, batch.through]).toEqual([[10], [14]]);
  const json = (i: number) => eventJson(rows[i]!, 1, rows[i]![rows[i]!.length - 1] === 1);
  const of = (customer: string, since: number) =>
    [...customerEvents(batch, customer, since)].map((i) => committedEvent(batch, commitBuffer(batch), i)).map(({ position, json, gatewayId, type }) => ({ position, json, gatewayId, type }));
  expect(json(0)).toBe('{"id":"a","class":"EVENT","type":"scan","created":1700000000000,"scan_code":"é\\u0000\\"\\\\","gateway_id":"g1"}');
  expect(of('c1', 0)).toEqual([
    { position: [11], json: json(0), gatewayId: 'g1', type: 'scan' },
    { position: [13], json: json(2), gatewayId: null, type: 'telemetry' },
    { position: [14], json: json(3), gatewayId: 'g2', type: 'scan' },
  ]);
  expect(of('c1', 13)).toEqual([{ position: [14], json: json(3), gatewayId: 'g2', type: 'scan' }]);
  expect(of('c2', 0)).toEqual([{ position: [12], json: json(1), gatewayId: null, type: 'scan' }]);
  expect(of('c3', 0)).toEqual([]);
});

it('writes each event as eventJson does, in UTF-8, the events separated by commas, ASCII or not, past its first buffer', () => {
  const packer = new CommittedPacker();
  const texts = ['plain', 'é', '😀x', 'tab\there', 'quote"', 'ü'.repeat(300), 'a'.repeat(2_000)];
  const numbers = [0, -0, 87, 31.5, 0.1, 1e-7, 123456789012345.67, 2 ** 60, 1e21, -1.5e-300];
  const rows = Array.from({ length: 400 }, (_, i) =>
    row('c1', { id: `e${i}`, scan_code: texts[i % texts.length]!, device_battery: numbers[i % numbers.length]!, gateway_station: i % 3 === 0 ? null : `s${i}` }),
  );
  rows.forEach((values, i) => packer.add(values, i + 1));
  const { batch } = handedOver(packer);
  const utf8 = commitBuffer(batch);
  const expected = rows.map((values) => eventJson(values, 1, values[values.length - 1] === 1));
  const events = [...customerEvents(batch, 'c1', 0)].map((i) => committedEvent(batch, utf8, i));
  expect(events.map((e) => e.utf8!.subarray(e.start, e.end).toString('utf8'))).toEqual(expected);
  expect(utf8.toString('utf8')).toBe(expected.join(','));
  // More than the 64 KiB the writer starts with: what was written before it grew is kept.
  expect(utf8.byteLength).toBeGreaterThan(64 * 1024);
});
