import type { CommittedEvents } from '../domain/ingest.js';
import { comparePositions, type StreamPosition } from '../domain/stream-cursor.js';
import type { CommittedEvent, EventLogRead, EventLogRepository } from '../store/ports/index.js';
import { commitBuffer, committedEvent, customerEvents } from '../store/shared/committed-events.js';

/**
 * Events kept per customer (their UTF-8, some 8 MB): forty batches, so that webhooks some seconds
 * apart share the reads, and one that is caught up finds the events handed over in memory.
 */
export const KEPT = 20_000;
/** How long after a read of the newest events commits still hand theirs over. */
const WANTED_MS = 1_000;

/**
 * A run of a window's events: a commit handed over (the customer's events in it, by index), or a
 * read of the store. The window keeps the commits as they came, a few objects each, and makes an
 * event's object only when a read asks for it: objects that lived as long as the window (half a
 * second at full load) were copied by every young-generation collection and then promoted.
 */
type Run = { commit: CommittedEvents; utf8: Buffer; indexes: Uint32Array } | { events: CommittedEvent[] };

/** One customer's newest events as read: every event after `from` up to `reached`, in commit order. */
interface Window {
  from: StreamPosition;
  runs: Run[];
  /** The events in the runs. */
  count: number;
  reached: StreamPosition;
  /**
   * Extended by the commits handed over, and no commit of the customer was heard of since
   * without its events (`stale`): nothing lies beyond `reached` that the store would answer yet.
   */
  fed?: boolean;
  stale?: boolean;
}

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
    let utf8: Buffer | undefined;
    for (const [customerId, window] of this.windows) {
      if (comparePositions(window.reached, batch.through) >= 0) continue;
      const gap = comparePositions(window.reached, batch.after) < 0;
      const since = gap ? batch.after : window.reached;
      const run: Run = { commit: batch, utf8: (utf8 ??= commitBuffer(batch)), indexes: customerEvents(batch, customerId, since[0]!) };
      const kept: Window = gap ? { from: batch.after, runs: [], count: 0, reached: batch.through, stale: window.stale } : window;
      if (gap) this.windows.set(customerId, kept);
      append(kept, run);
      kept.reached = batch.through;
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
      if (!window || comparePositions(read.reached, window.reached) > 0) {
        const kept: Window = { from: after, runs: [], count: 0, reached: read.reached };
        append(kept, { events: [...read.events] });
        windows.set(customerId, kept);
      }
      return read;
    }
    const held = eventsAfter(window, after, limit);
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
      append(extended, { events: [...read.events] });
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

  /** Drops the oldest events beyond `kept`: whole runs, and the start of the first one left. */
  private trim(window: Window): void {
    let extra = window.count - this.kept;
    if (extra <= 0) return;
    window.count -= extra;
    while (extra > 0) {
      const run = window.runs[0]!;
      const length = lengthOf(run);
      if (length <= extra) {
        window.from = positionAt(run, length - 1);
        window.runs.shift();
        extra -= length;
        continue;
      }
      window.from = positionAt(run, extra - 1);
      window.runs[0] = 'events' in run ? { events: run.events.slice(extra) } : { ...run, indexes: run.indexes.subarray(extra) };
      extra = 0;
    }
  }
}

function append(window: Window, run: Run): void {
  const length = lengthOf(run);
  if (length === 0) return;
  window.runs.push(run);
  window.count += length;
}

function lengthOf(run: Run): number {
  return 'events' in run ? run.events.length : run.indexes.length;
}

function positionAt(run: Run, k: number): StreamPosition {
  return 'events' in run ? run.events[k]!.position : [run.commit.seqs[run.indexes[k]!]!];
}

function eventAt(run: Run, k: number): CommittedEvent {
  return 'events' in run ? run.events[k]! : committedEvent(run.commit, run.utf8, run.indexes[k]!);
}

/** Up to `limit` of the window's events after the position, in commit order. */
function eventsAfter(window: Window, position: StreamPosition, limit: number): CommittedEvent[] {
  const { runs } = window;
  // The first run that ends after the position, then the first event after it in that run (both in commit order).
  let r = firstIndex(runs.length, (i) => comparePositions(positionAt(runs[i]!, lengthOf(runs[i]!) - 1), position) > 0);
  const events: CommittedEvent[] = [];
  if (r === runs.length) return events;
  let k = firstIndex(lengthOf(runs[r]!), (i) => comparePositions(positionAt(runs[r]!, i), position) > 0);
  for (; r < runs.length && events.length < limit; r++, k = 0) {
    const run = runs[r]!;
    const length = Math.min(lengthOf(run), k + limit - events.length);
    for (; k < length; k++) events.push(eventAt(run, k));
  }
  return events;
}

/** The first index below `length` at which `after` holds (binary search: it holds from there on). */
function firstIndex(length: number, after: (index: number) => boolean): number {
  let low = 0;
  let high = length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (after(middle)) high = middle;
    else low = middle + 1;
  }
  return low;
}
