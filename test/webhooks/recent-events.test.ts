// RecentEvents (src/webhooks/recent-events.ts): reads of the commit order shared by the webhooks
// of a customer answer exactly what the event log answers, and read each event from it once; the
// events commits hand over are answered from memory, and a reader behind them reads the log.
import { describe, expect, it } from 'vitest';
import type { CommittedEvents } from '../../src/domain/ingest.js';
import { comparePositions, type StreamPosition } from '../../src/domain/stream-cursor.js';
import type { CommittedEvent, EventLogRead, EventLogRepository } from '../../src/store/ports/index.js';
import { storedValues, type EventRow } from '../../src/domain/events.js';
import { CommittedPacker } from '../../src/store/shared/committed-events.js';
import { eventJson } from '../../src/store/shared/event-json.js';
import { RecentEvents } from '../../src/webhooks/recent-events.js';

/** An event log over an array, counting the events it hands out. */
class ArrayLog implements Pick<EventLogRepository, 'after'> {
  events: CommittedEvent[] = [];
  served = 0;

  add(count: number): void {
    for (let i = 0; i < count; i++) {
      const seq = this.events.length + 1;
      this.events.push({ position: [seq], json: `{"id":"e${seq}"}`, gatewayId: null });
    }
  }

  /** Adds `count` events as one commit and returns them as the writer hands them over. */
  commit(count: number): CommittedEvents {
    const before = this.events.length;
    this.add(count);
    return packed('c', this.events.slice(before));
  }

  async after(_customerId: string, after: StreamPosition, limit: number): Promise<EventLogRead> {
    const events = this.events.filter((e) => comparePositions(e.position, after) > 0).slice(0, limit);
    this.served += events.length;
    const more = events.length === limit;
    const head: StreamPosition = [this.events.length];
    return { events, reached: more ? events[events.length - 1]!.position : comparePositions(head, after) > 0 ? head : after, more };
  }
}

/** A commit of the customer's events as the writer thread hands it over (stored rows whose JSON is the events' own). */
function packed(customerId: string, events: CommittedEvent[]): CommittedEvents {
  const packer = new CommittedPacker();
  for (const event of events) {
    const row = storedValues(customerId, JSON.parse(event.json) as EventRow);
    expect(eventJson(row, 1)).toBe(event.json);
    packer.add(row, event.position[0]!);
  }
  return packer.packed();
}

const ids = (read: EventLogRead) => read.events.map((e) => e.position[0]);

describe('RecentEvents', () => {
  it('answers as the log does, from the window where it holds the range, and reads each event once for several readers', async () => {
    const log = new ArrayLog();
    const recent = new RecentEvents(log as unknown as EventLogRepository);
    log.add(10);
    expect(ids(await recent.after('c', [0], 4))).toEqual([1, 2, 3, 4]);
    // A second reader at the same place: from the window, nothing read again.
    const served = log.served;
    expect(ids(await recent.after('c', [0], 4))).toEqual([1, 2, 3, 4]);
    expect(log.served).toBe(served);
    // Past the window's end: the rest read once, the window extended.
    expect(await recent.after('c', [2], 20)).toEqual({ events: log.events.slice(2), reached: [10], more: false });
    const afterExtension = log.served;
    expect(ids(await recent.after('c', [5], 3))).toEqual([6, 7, 8]);
    expect(log.served).toBe(afterExtension);
    // New events: read once, then shared.
    log.add(5);
    expect(ids(await recent.after('c', [8], 10))).toEqual([9, 10, 11, 12, 13, 14, 15]);
    expect(ids(await recent.after('c', [12], 10))).toEqual([13, 14, 15]);
    expect(log.served).toBe(afterExtension + 5);
  });

  it('reads a position before the window (a replay) from the log without moving the window back', async () => {
    const log = new ArrayLog();
    const recent = new RecentEvents(log as unknown as EventLogRepository);
    log.add(30);
    await recent.after('c', [20], 100);
    expect(ids(await recent.after('c', [3], 4))).toEqual([4, 5, 6, 7]);
    const served = log.served;
    expect(ids(await recent.after('c', [25], 3))).toEqual([26, 27, 28]);
    expect(log.served).toBe(served);
  });

  it('answers a caught-up reader from the events commits hand over, reading nothing from the log', async () => {
    const log = new ArrayLog();
    const recent = new RecentEvents(log);
    log.add(3);
    expect(ids(await recent.after('c', [0], 500))).toEqual([1, 2, 3]);
    const served = log.served;
    recent.committed(log.commit(4));
    // Another customer's commit moves the window on too: nothing of this customer lies in it.
    recent.committed(packed('d', [8, 9].map((seq) => ({ position: [seq], json: `{"id":"d${seq}"}`, gatewayId: null }))));
    log.add(2);
    const read = await recent.after('c', [3], 500);
    // As the log would answer them, with the commit's bytes besides.
    expect({ ...read, events: read.events.map(({ position, json, gatewayId }) => ({ position, json, gatewayId })) }).toEqual({ events: log.events.slice(3, 7), reached: [9], more: false });
    expect(read.events.map((e) => e.utf8!.subarray(e.start, e.end).toString())).toEqual(log.events.slice(3, 7).map((e) => e.json));
    expect(log.served).toBe(served);
    expect(recent.stats).toEqual({ fromMemory: 4, fromStore: 3 });
  });

  it('reads from the log what no commit handed over (a gap), then goes on in memory: every event in order', async () => {
    const log = new ArrayLog();
    const recent = new RecentEvents(log);
    recent.committed(log.commit(2)); // no window yet: no webhook reads this customer
    expect(ids(await recent.after('c', [0], 500))).toEqual([1, 2]);
    log.add(3); // committed elsewhere (not by the ingest writer): not handed over
    recent.committed(log.commit(2));
    expect(ids(await recent.after('c', [2], 500))).toEqual([3, 4, 5, 6, 7]);
    const served = log.served;
    recent.committed(log.commit(2));
    expect(ids(await recent.after('c', [7], 500))).toEqual([8, 9]);
    expect(log.served).toBe(served);
    // A commit heard of without its events (events-committed without them): the end of the window reads the log again.
    log.add(2);
    expect(ids(await recent.after('c', [9], 500))).toEqual([]);
    recent.committedElsewhere(['c']);
    expect(ids(await recent.after('c', [9], 500))).toEqual([10, 11]);
    expect(log.served).toBe(served + 2);
  });

  it('after commits heard of without their events, reads on from the log until it reached the end, not only the first page', async () => {
    const log = new ArrayLog();
    const recent = new RecentEvents(log);
    await recent.after('c', [0], 500);
    recent.committed(log.commit(2)); // fed by the commits
    log.add(30); // committed while no webhook read the newest events: not handed over
    recent.committedElsewhere(['c']);
    const got: number[] = [];
    let position: StreamPosition = [0];
    for (let reads = 0; reads < 10; reads++) {
      const read = await recent.after('c', position, 10);
      got.push(...ids(read));
      position = read.reached;
      if (!read.more && read.events.length === 0) break;
    }
    expect(got).toEqual(Array.from({ length: 32 }, (_, i) => i + 1));
  });

  it('keeps a bounded window: readers that fell behind it get every event in order, the part dropped read from the log once for both', async () => {
    const log = new ArrayLog();
    const recent = new RecentEvents(log, 50);
    await recent.after('c', [0], 500);
    for (let i = 0; i < 30; i++) recent.committed(log.commit(10));
    const served = log.served;
    const readers = [{ got: [] as number[], position: [0] as StreamPosition, done: false }, { got: [] as number[], position: [0] as StreamPosition, done: false }];
    while (readers.some((reader) => !reader.done)) {
      for (const reader of readers.filter((r) => !r.done)) {
        const read = await recent.after('c', reader.position, 40);
        reader.got.push(...ids(read));
        reader.position = read.reached;
        reader.done = !read.more;
      }
    }
    for (const reader of readers) expect(reader.got).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    // The window keeps events 251-300: pages of 40 from the log up to 280 (the seventh reaches into the window), once for both readers.
    expect(log.served - served).toBe(280);
    expect(recent.stats).toEqual({ fromMemory: 280 + 2 * 20, fromStore: 280 });
  });
});
