// The hand-off of a commit's events (src/store/shared/committed-events.ts): packed into one string
// and typed arrays, read back per customer exactly as they went in, after a position.
import { expect, it } from 'vitest';
import { CommittedPacker, committedEventsOf } from '../../src/store/shared/committed-events.js';

it('gives back the events of each customer after a seq, JSON, position and gateway as packed, across a structured clone', () => {
  const packer = new CommittedPacker();
  const added = [
    ['c1', 11, '{"id":"a","scan_code":"é\\u0000"}', 'g1'],
    ['c2', 12, '{"id":"b"}', null],
    ['c1', 13, '{"id":"c"}', null],
    ['c1', 14, '{"id":"d","note":"😀"}', 'g2'],
  ] as const;
  for (const [customer, seq, json, gateway] of added) packer.add(customer, seq, json, gateway);
  const batch = structuredClone(packer.packed());
  expect([batch.after, batch.through]).toEqual([[10], [14]]);
  const of = (customer: string, since: number) => committedEventsOf(batch, customer, since).map(({ position, json, gatewayId }) => ({ position, json, gatewayId }));
  expect(of('c1', 0)).toEqual([
    { position: [11], json: '{"id":"a","scan_code":"é\\u0000"}', gatewayId: 'g1' },
    { position: [13], json: '{"id":"c"}', gatewayId: null },
    { position: [14], json: '{"id":"d","note":"😀"}', gatewayId: 'g2' },
  ]);
  expect(of('c1', 13)).toEqual([{ position: [14], json: '{"id":"d","note":"😀"}', gatewayId: 'g2' }]);
  expect(of('c2', 0)).toEqual([{ position: [12], json: '{"id":"b"}', gatewayId: null }]);
  expect(of('c3', 0)).toEqual([]);
});

it('gives each event its UTF-8 bytes within those of the commit, which hold the events separated by commas', () => {
  const packer = new CommittedPacker();
  const added = ['{"id":"a","note":"é"}', '{"id":"b","note":"😀"}', '{"id":"c"}'];
  added.forEach((json, i) => packer.add('c1', i + 1, json, null));
  const events = committedEventsOf(structuredClone(packer.packed()), 'c1', 0);
  expect(events.map((e) => e.utf8!.subarray(e.start, e.end).toString('utf8'))).toEqual(added);
  expect(events[0]!.utf8!.toString('utf8')).toBe(added.join(','));
  expect(new Set(events.map((e) => e.utf8)).size).toBe(1);
});
