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
  expect(committedEventsOf(batch, 'c1', 0)).toEqual([
    { position: [11], json: '{"id":"a","scan_code":"é\\u0000"}', gatewayId: 'g1' },
    { position: [13], json: '{"id":"c"}', gatewayId: null },
    { position: [14], json: '{"id":"d","note":"😀"}', gatewayId: 'g2' },
  ]);
  expect(committedEventsOf(batch, 'c1', 13)).toEqual([{ position: [14], json: '{"id":"d","note":"😀"}', gatewayId: 'g2' }]);
  expect(committedEventsOf(batch, 'c2', 0)).toEqual([{ position: [12], json: '{"id":"b"}', gatewayId: null }]);
  expect(committedEventsOf(batch, 'c3', 0)).toEqual([]);
});
