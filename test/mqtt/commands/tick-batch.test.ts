// TickBatch (src/mqtt/commands/tick-batch.ts): the items of one turn of the event loop go to the
// store together; with a hold (PUBACKs and responses on PostgreSQL: delivery.ts ACK_HOLD_MS), those
// of that many milliseconds, over many turns.
import { afterEach, expect, it, vi } from 'vitest';
import { TickBatch } from '../../../src/mqtt/commands/tick-batch.js';

afterEach(() => {
  vi.useRealTimers();
});

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

it('without a hold, each turn of the event loop is one flush', async () => {
  const flushes: number[][] = [];
  const batch = new TickBatch<number, string>(async (items) => (flushes.push(items), items.map((n) => `#${n}`)));
  const first = [batch.add(1), batch.add(2)];
  await nextTurn();
  const second = batch.add(3);
  expect(await Promise.all([...first, second])).toEqual(['#1', '#2', '#3']);
  expect(flushes).toEqual([[1, 2], [3]]);
});

it('with a hold, the items of that many milliseconds over many turns are one flush', async () => {
  vi.useFakeTimers({ toFake: ['setTimeout'] });
  const flushes: number[][] = [];
  const batch = new TickBatch<number, string>(async (items) => (flushes.push(items), items.map((n) => `#${n}`)), 50);
  const answers = [batch.add(1)];
  await nextTurn();
  answers.push(batch.add(2));
  vi.advanceTimersByTime(49);
  await nextTurn();
  expect(flushes).toEqual([]);
  vi.advanceTimersByTime(1);
  expect(await Promise.all(answers)).toEqual(['#1', '#2']);
  expect(flushes).toEqual([[1, 2]]);
});
