import type { CommittedEvents } from '../domain/ingest.js';
import { comparePositions, type StreamPosition } from '../domain/stream-cursor.js';
import type { CommittedEvent, EventLogRead, EventLogRepository } from '../store/ports/index.js';
import { commitBytes, committedEventsOf, type CommitBytes } from '../store/shared/committed-events.js';

/**
 * Events kept per customer (their JSON, some 8 MB, and as much again in the UTF-8 bytes of the
 * commits handed over): forty batches, so that webhooks some seconds
 * apart share the reads, and one that is caught up finds the events handed over in memory.
 */
export const KEPT = 20_000;
/** How long after a read of the newest events commits still hand theirs over. */
const WANTED_MS = 1_000;

/** One customer's newest events as read: every event after `from` up to `reached`, in commit order. */
interface Window {
  from: StreamPosition;
  events: CommittedEvent[];
  reached: StreamPosition;
  /**
   * Extended by the commits handed over, and no commit of the customer was heard of since
   * without its events (`stale`): nothing lies beyond `reached` that the store would answer yet.
   */
  fed?: boolean;
  stale?: boolean;
}

/**
 * The commit order read once for all the webhooks of a customer on this instance (as the live
 * stream's hubs do, server/live-events/customer-hub.ts): a read after a position the window holds
 * is answered from it, and a read past its end extends it, so three webhooks that follow the same
 * events read each of them from the database once, not three times. The events a commit hands
 * over (`committed`) extend the windows too, so a webhook that is caught up reads nothing back;
 * those behind a window (a restart, a receiver's outage, a replay) read from the store, sharing
 * a second window of their own (`trails`) as the first one.
 */
export class RecentEvents {
  /** The newest events of each customer, extended by the commits handed over. */
  private readonly windows = new Map<string, Window>();
  /** Events before those, as the webhooks that are behind read them. */
  private readonly trails = new Map<string, Window>();
  /** Events answered from the windows, and read from the store (for tests and the benchmark's profile). */
  readonly stats = { fromMemory: 0, fromStore: 0 };
  /** When a webhook last read at or past the start of the newest events (performance.now()). */
  private headRead = -Infinity;

  constructor(
    private readonly log: Pick<EventLogRepository, 'after'>,
    private readonly kept = KEPT,
  ) {}

  /**
   * Whether some webhook read the newest events lately: the commits' events are worth handing
   * over. While every one is behind (slow receivers), they read from the store anyway.
   */
  get wanted(): boolean {
    return performance.now() - this.headRead < WANTED_MS;
  }

  /**
   * The events of one commit, handed over by the writer: appended to each window that reaches
   * up to them; a window that ends before them (commits not handed over lie between) starts
   * again with them. Customers without a window (no webhook reads them) are passed over.
   */
  committed(batch: CommittedEvents): void {
    let bytes: CommitBytes | undefined;
    for (const [customerId, window] of this.windows) {
      if (comparePositions(window.reached, batch.through) >= 0) continue;
      const gap = comparePositions(window.reached, batch.after) < 0;
      const since = gap ? batch.after : window.reached;
      const events: CommittedEvent[] = committedEventsOf(batch, customerId, since[0]!, (bytes ??= commitBytes(batch)));
      const kept: Window = gap ? { from: batch.after, events, reached: batch.through, stale: window.stale } : window;
      if (gap) this.windows.set(customerId, kept);
      else {
        for (const event of events) window.events.push(event);
        window.reached = batch.through;
      }
      kept.fed = true;
      this.trim(kept);
    }
  }

  /** Commits of these customers (every one when not given) whose events were not handed over: their windows read the store at their end again. */
  committedElsewhere(customerIds?: readonly string[]): void {
    for (const customerId of customerIds ?? this.windows.keys()) {
      const window = this.windows.get(customerId);
      if (window) window.stale = true;
    }
  }

  /** As EventLogRepository.after (without a gateway): up to `limit` events of the customer after `after`. */
  async after(customerId: string, after: StreamPosition, limit: number): Promise<EventLogRead> {
    const head = this.windows.get(customerId);
    // Behind the window of the newest events: the webhooks that are behind share a window of their own.
    const behind = head !== undefined && comparePositions(after, head.from) < 0;
    if (!behind) this.headRead = performance.now();
    return this.through(behind ? this.trails : this.windows, customerId, after, limit);
  }

  /** A read answered from the customer's window of `windows` where it holds the range, else from the store (kept as the window when newer). */
  private async through(windows: Map<string, Window>, customerId: string, after: StreamPosition, limit: number): Promise<EventLogRead> {
    const window = windows.get(customerId);
    if (!window || comparePositions(after, window.from) < 0 || comparePositions(after, window.reached) > 0) {
      const read = await this.read(customerId, after, limit);
      // Kept only when it is the newest read: an older one (a replay) would push the others' window back.
      if (!window || comparePositions(read.reached, window.reached) > 0) windows.set(customerId, { from: after, events: [...read.events], reached: read.reached });
      return read;
    }
    const start = firstAfter(window.events, after);
    const held = window.events.slice(start, start + limit);
    this.stats.fromMemory += held.length;
    if (held.length === limit) return { events: held, reached: held[held.length - 1]!.position, more: true };
    // Fed by the commits and none heard of since without its events: nothing more to read yet (a
    // read would race the commits whose events are on their way here).
    if (window.fed && !window.stale) return { events: held, reached: window.reached, more: false };
    // The window ends before the limit: read on from its end, once for everyone.
    const extended = window;
    const end = extended.reached;
    extended.stale = false;
    const read = await this.read(customerId, end, limit - held.length);
    // Appended only when nothing moved the window meanwhile (another reader extended or replaced it).
    if (windows.get(customerId) === extended && extended.reached === end) {
      extended.events.push(...read.events);
      extended.reached = read.reached;
      // A read that stopped at its limit left events in the store that no commit will hand over.
      if (read.more) extended.stale = true;
      this.trim(extended);
    }
    const events = [...held, ...read.events];
    return { events, reached: read.reached, more: read.more };
  }

  private async read(customerId: string, after: StreamPosition, limit: number): Promise<EventLogRead> {
    const read = await this.log.after(customerId, after, limit);
    this.stats.fromStore += read.events.length;
    return read;
  }

  /** Forgets a customer whose webhooks this instance no longer delivers. */
  drop(customerId: string): void {
    this.windows.delete(customerId);
    this.trails.delete(customerId);
  }

  private trim(window: Window): void {
    const extra = window.events.length - this.kept;
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
