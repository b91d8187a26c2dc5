import type { ApiEvent } from '../../../src/client/events';
import { ApiError, customerPath } from '../../lib/api';
import type { StreamItem } from '../../lib/event-stream';
import { followEventStream } from '../../lib/follow-stream';
import { RateHistory } from './rate-history';

/**
 * Scans the page holds and shows: the newest, whatever the rate (docs/console.md "Live"). More than
 * arrive between two renders at 500 a second (125), so that at that rate every scan is shown once.
 */
export const LIVE_ROWS = 200;
/** Seconds the rate sparkline covers. */
export const RATE_SECONDS = 300;
/** How often new scans reach the table: at 500 a second, a render per 125 rather than per scan. */
const FLUSH_MS = 250;

export type FeedState = 'connecting' | 'live' | 'reconnecting' | 'stopped';

/** What the page shows of the feed at one moment. */
export interface FeedView {
  /** Newest first, at most LIVE_ROWS. */
  rows: readonly ApiEvent[];
  state: FeedState;
  /** Why the feed is reconnecting or stopped (the API's error); undefined while live. */
  error: unknown;
  /** Scans that arrived while paused, not shown yet. */
  missed: number;
  /** Scans a second over the last RATE_SECONDS, oldest first. */
  rate: number[];
  /** Scans received since the page opened, or since the gateway filter changed. */
  total: number;
}

/**
 * The customer's scans as they are stored: the live event stream read with fetch, reconnected with
 * `Last-Event-ID` when the server ends it, kept as a bounded list and a per-second count.
 */
export class LiveFeed {
  private rows: ApiEvent[] = [];
  /** Arrived since the last flush, oldest first; trimmed to LIVE_ROWS (only the newest are ever shown). */
  private pending: ApiEvent[] = [];
  private readonly rate = new RateHistory(RATE_SECONDS);
  private state: FeedState = 'connecting';
  private error: unknown;
  private paused = false;
  private missed = 0;
  private total = 0;
  private lastId: string | undefined;
  private gatewayId = '';
  private connection = new AbortController();
  private readonly timer: ReturnType<typeof setInterval>;
  private lastSecond = 0;
  private changed = true;

  constructor(private readonly onView: (view: FeedView) => void) {
    this.timer = setInterval(() => this.flush(), FLUSH_MS);
    void this.run(this.connection.signal);
  }

  view(): FeedView {
    return { rows: this.rows, state: this.state, error: this.error, missed: this.missed, rate: this.rate.series(Date.now()), total: this.total };
  }

  /** Freezes the table (the stream goes on, counting what is not shown), or shows the newest again. */
  setPaused(paused: boolean): void {
    this.paused = paused;
    if (!paused) this.missed = 0;
    this.changed = true;
    this.flush();
  }

  /**
   * Streams one gateway's scans (or all, for ''). Narrowing resumes after the last event received,
   * so nothing is missed; widening starts from now, since catching up on every other gateway's
   * scans of the meantime would flood the table with the past.
   */
  setGateway(gatewayId: string): void {
    if (gatewayId === this.gatewayId) return;
    const narrowing = this.gatewayId === '';
    this.gatewayId = gatewayId;
    if (!narrowing) this.lastId = undefined;
    const keep = (event: ApiEvent) => gatewayId === '' || event.gateway_id === gatewayId;
    this.rows = this.rows.filter(keep);
    this.pending = this.pending.filter(keep);
    this.rate.clear();
    this.total = 0;
    this.connection.abort();
    this.connection = new AbortController();
    this.setState('connecting', undefined);
    void this.run(this.connection.signal);
    this.flush();
  }

  stop(): void {
    clearInterval(this.timer);
    this.connection.abort();
    this.state = 'stopped';
  }

  private run(signal: AbortSignal): Promise<void> {
    const path = customerPath(`/events/stream${this.gatewayId ? `?gateway_id=${encodeURIComponent(this.gatewayId)}` : ''}`);
    return followEventStream(path, {
      signal,
      lastEventId: () => this.lastId,
      onOpen: () => this.setState('live', undefined),
      onItems: (items) => this.take(items),
      onBreak: (failure, final) => {
        // 401 ends the session (the shell signs in again); 403, the role lost event.read: both are final.
        if (final) return this.setState('stopped', failure);
        // 400 for Last-Event-ID: the deployment does not know that position (a restored backup); go on from now.
        if (failure instanceof ApiError && failure.status === 400 && this.lastId) this.lastId = undefined;
        // Without a failure, the server ended the stream (shutting down, or this reader fell behind): go on where it stopped.
        this.setState('reconnecting', failure);
      },
    });
  }

  private take(items: StreamItem[]): void {
    const now = Date.now();
    for (const item of items) {
      if (item.kind !== 'event') continue;
      if (item.id) this.lastId = item.id;
      const event = JSON.parse(item.data) as ApiEvent;
      if (event.type !== 'scan') continue;
      this.rate.count(now);
      this.total++;
      this.pending.push(event);
      if (this.paused) {
        this.missed++;
        this.changed = true;
      }
    }
    if (this.pending.length > 2 * LIVE_ROWS) this.pending = this.pending.slice(-LIVE_ROWS);
    // A table's worth waiting: show it now rather than let the next ones push it out unseen (a
    // late timer on a busy machine, a burst).
    else if (!this.paused && this.pending.length >= LIVE_ROWS) this.flush();
  }

  private setState(state: FeedState, error: unknown): void {
    this.state = state;
    this.error = error;
    this.changed = true;
  }

  /** Moves what arrived into the table (unless paused), and hands the page a new view when something changed. */
  private flush(): void {
    if (!this.paused && this.pending.length > 0) {
      this.rows = this.pending.slice(-LIVE_ROWS).reverse().concat(this.rows.slice(0, Math.max(0, LIVE_ROWS - this.pending.length)));
      this.pending = [];
      this.changed = true;
    }
    const second = Math.floor(Date.now() / 1000);
    if (second !== this.lastSecond) {
      this.lastSecond = second;
      this.changed = true;
    }
    if (!this.changed) return;
    this.changed = false;
    this.onView(this.view());
  }
}
