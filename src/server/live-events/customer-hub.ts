import { comparePositions, laterPosition, type StreamPosition } from '../../domain/stream-cursor.js';
import { RETRY_DELAYS_MS, frameOf, type LiveBatch, type LiveEventReader } from './frames.js';
import type { LiveStream } from './live-stream.js';

/** The reader of one customer's new events on this instance, shared by all its streams. */
export class CustomerHub {
  /** Every event up to here was read and handed to the live streams. */
  position: StreamPosition = [];
  readonly ready: Promise<void>;
  /** Streams of the customer, catching up or live. */
  readonly members = new Set<LiveStream>();
  private readonly live = new Set<LiveStream>();
  /** A position announced by a signal that reads must reach. */
  private wanted: StreamPosition | undefined;
  private reading = false;
  private again = false;
  private retry: NodeJS.Timeout | undefined;
  private retries = 0;
  private stopped = false;

  constructor(
    private readonly events: LiveEventReader,
    readonly customerId: string,
  ) {
    this.ready = events.store.eventLog.head().then((head) => {
      this.position = head;
    });
    // A failed start is the opening stream's error; the hub is then left by it and dropped.
    this.ready.catch(() => undefined);
  }

  join(stream: LiveStream): void {
    this.live.add(stream);
  }

  leave(stream: LiveStream): void {
    this.members.delete(stream);
    this.live.delete(stream);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
  }

  /** A commit (up to `through`, when known) may have brought events: read them. */
  wake(through?: StreamPosition): void {
    if (this.stopped) return;
    if (through) this.wanted = this.wanted ? laterPosition(this.wanted, through) : through;
    if (this.reading) {
      this.again = true;
      return;
    }
    clearTimeout(this.retry);
    this.retry = undefined;
    void this.read();
  }

  private async read(): Promise<void> {
    this.reading = true;
    let failed = false;
    try {
      await this.ready;
      do {
        this.again = false;
        const read = await this.events.store.eventLog.after(this.customerId, this.position, this.events.options.readLimit);
        if (this.stopped) return;
        this.position = laterPosition(this.position, read.reached);
        // Frames only for streams that take events: a hub of alert-only streams just keeps its position.
        if (read.events.length > 0 && this.live.size > 0) {
          const events = read.events.map((event) => frameOf(this.events.key, this.customerId, event));
          // The frames of the read as one buffer, encoded once: a stream that takes them all writes it as it is.
          const batch: LiveBatch = { events, bytes: Buffer.from(events.map((event) => event.frame).join('')) };
          for (const stream of this.live) stream.deliver(batch);
        }
        if (read.more) this.again = true;
      } while (this.again && !this.stopped);
    } catch (error) {
      failed = true;
      this.events.log.warn({ customer_id: this.customerId, reason: (error as Error).message }, 'live events: reading new events failed; retrying');
    } finally {
      this.reading = false;
    }
    if (this.stopped) return;
    // An announced commit not readable yet (PostgreSQL: an older transaction is still open), or a failed read: again soon.
    const behind = this.wanted !== undefined && comparePositions(this.position, this.wanted) < 0;
    if (!behind && !failed) {
      this.wanted = undefined;
      this.retries = 0;
      return;
    }
    const delay = RETRY_DELAYS_MS[Math.min(this.retries++, RETRY_DELAYS_MS.length - 1)]!;
    this.retry = setTimeout(() => this.wake(), delay);
    this.retry.unref();
  }
}
