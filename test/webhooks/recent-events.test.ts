// RecentEvents (src/webhooks/recent-events.ts): reads of the commit order shared by the webhooks
// of a customer answer exactly what the event log answers, and read each event from it once.
import { describe, expect, it } from 'vitest';
import { comparePositions, type StreamPosition } from '../../src/domain/stream-cursor.js';
import type { CommittedEvent, EventLogRead, EventLogRepository } from '../../src/store/ports/index.js';
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

  async after(_customerId: string, after: StreamPosition, limit: number): Promise<EventLogRead> {
    const events = this.events.filter((e) => comparePositions(e.position, after) > 0).slice(0, limit);
    this.served += events.length;
    const more = events.length === limit;
    const head: StreamPosition = [this.events.length];
    return { events, reached: more ? events[events.length - 1]!.position : comparePositions(head, after) > 0 ? head : after, more };
  }
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
});
