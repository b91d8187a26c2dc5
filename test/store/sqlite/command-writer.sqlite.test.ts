// The grouping of the writes of command delivery where `serve` routes them to the ingest writer
// thread (src/store/sqlite/command-writer.ts): PUBACKs and responses alone wait HOLD_MS for company
// and then go as one group (one commit); a claim or a creation, which a caller waits for, goes at
// once and takes the waiting ones with it.
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import type { CommandWrite } from '../../../src/store/ports/index.js';
import { HOLD_MS } from '../../../src/store/sqlite/command-writer.js';
import { openTempStore } from '../../helpers/sqlite.js';

const GW = 'aaaaaaaa-0000-4000-8000-000000000001';
const T0 = 1_800_000_000_000;
let temp: ReturnType<typeof openTempStore>;
/** The kinds of each group the route was given, in order. */
let groups: CommandWrite['kind'][][];

beforeEach(() => {
  temp = openTempStore();
  groups = [];
  temp.store.commands.routeWrites!((writes) => {
    groups.push(writes.map((w) => w.kind));
    return Promise.resolve(temp.store.commands.runWrites!(writes));
  });
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});
afterEach(async () => {
  vi.useRealTimers();
  await temp.close();
});

/** Lets the promise callbacks of the writes run (no timer). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

it('PUBACKs and responses wait HOLD_MS, then commit together', async () => {
  const delivered = temp.store.commands.delivered([{ gateway_id: GW, id: 'a' }], T0, true);
  await settle();
  const responded = temp.store.commands.respond([{ gateway_id: GW, id: 'b', status: 'SUCCEEDED', details: null }], T0, true);
  await settle();
  vi.advanceTimersByTime(HOLD_MS - 1);
  await settle();
  expect(groups).toEqual([]);
  vi.advanceTimersByTime(1);
  expect(await Promise.all([delivered, responded])).toEqual([[], ['unknown']]);
  expect(groups).toEqual([['delivered', 'respond']]);
});

it('a claim goes at once, with the PUBACKs and responses waiting before it', async () => {
  const delivered = temp.store.commands.delivered([{ gateway_id: GW, id: 'a' }], T0, true);
  await settle();
  const claimed = temp.store.commands.claim([{ gateway_id: GW, exclude: [], limit: 16 }], T0);
  expect(await Promise.all([delivered, claimed])).toEqual([[], [[]]]);
  expect(groups).toEqual([['delivered', 'claim']]);
  // Nothing left waiting: the held timer was let go.
  vi.advanceTimersByTime(HOLD_MS);
  await settle();
  expect(groups).toEqual([['delivered', 'claim']]);
});
