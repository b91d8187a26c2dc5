import { comparePositions, type StreamPosition } from '../domain/stream-cursor.js';
import type { CommittedEvent, EventLogRead, EventLogRepository } from '../store/ports/index.js';

/**
 * Events kept per customer (their JSON, some 8 MB): forty batches, so that webhooks some seconds
 * apart at full ingest still share the reads.
 */
const KEPT = 20_000;

/** One customer's newest events as read: every event after `from` up to `reached`, in commit order. */
interface Window {
  from: StreamPosition;
  events: CommittedEvent[];
  reached: StreamPosition;
}

/**
 * The commit order read once for all the webhooks of a customer on this instance (as the live
 * stream's hubs do, server/live-events/customer-hub.ts): a read after a position the window holds
 * is answered from it, and a read past its end extends it, so three webhooks that follow the same
 * events read each of them from the database once, not three times.
 */
export class RecentEvents {
  private readonly windows = new Map<string, Window>();

  constructor(private readonly log: EventLogRepository) {}

  /** As EventLogRepository.after (without a gateway): up to `limit` events of the customer after `after`. */
  async after(customerId: string, after: StreamPosition, limit: number): Promise<EventLogRead> {
    let window = this.windows.get(customerId);
    if (!window || comparePositions(after, window.from) < 0 || comparePositions(after, window.reached) > 0) {
      const read = await this.log.after(customerId, after, limit);
      // Kept only when it is the newest read: an older one (a replay) would push the others' window back.
      if (!window || comparePositions(read.reached, window.reached) > 0) this.windows.set(customerId, { from: after, events: [...read.events], reached: read.reached });
      return read;
    }
    const start = firstAfter(window.events, after);
    const held = window.events.slice(start, start + limit);
    if (held.length === limit) return { events: held, reached: held[held.length - 1]!.position, more: true };
    // The window ends before the limit: read on from its end, once for everyone.
    const extended = window;
    const end = extended.reached;
    const read = await this.log.after(customerId, end, limit - held.length);
    // Appended only when nothing moved the window meanwhile (another reader extended or replaced it).
    if (this.windows.get(customerId) === extended && extended.reached === end) {
      extended.events.push(...read.events);
      extended.reached = read.reached;
      this.trim(extended);
    }
    const events = [...held, ...read.events];
    return { events, reached: read.reached, more: read.more };
  }

  /** Forgets a customer whose webhooks this instance no longer delivers. */
  drop(customerId: string): void {
    this.windows.delete(customerId);
  }

  private trim(window: Window): void {
    const extra = window.events.length - KEPT;
    if (extra <= 0) return;
    window.from = window.events[extra - 1]!.position;
    window.events.splice(0, extra);
  }
}

/** The index of the first event after the position (binary search: the events are in commit order). */
function firstAfter(events: CommittedEvent[], position: StreamPosition): number {
  let low = 0;
  let high = events.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (comparePositions(events[middle]!.position, position) <= 0) low = middle + 1;
    else high = middle;
  }
  return low;
}
