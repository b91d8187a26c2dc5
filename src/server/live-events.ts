import { EventEmitter } from 'node:events';
import { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { comparePositions, encodeCursor, laterPosition, type StreamPosition } from '../domain/stream-cursor.js';
import type { CommittedEvent, Signal, Store } from '../store/ports/index.js';

/**
 * Live events (docs/events.md "Live events"): the Server-Sent Events of
 * `GET /{customer_id}/events/stream`. One hub per customer with streams on this instance reads the
 * customer's new events once after each commit signal and hands them to all its streams; a stream
 * that starts behind (Last-Event-ID) reads its own way up to the hub first, then joins it.
 */

export interface LiveEventOptions {
  /** Time between heartbeat comments (and credential re-checks) of a stream. */
  heartbeatMs: number;
  /**
   * Bytes a stream may hold for a client that does not read: when more still wait as the next
   * events come, it is cut off. A stream so holds at most this plus one read (readLimit events).
   */
  bufferBytes: number;
  /** How long a cut-off (or shut-down) stream's last bytes may take to reach its client before the connection is closed. */
  lingerMs: number;
  /** Events per read of the store. */
  readLimit: number;
}

export const DEFAULT_LIVE_EVENT_OPTIONS: LiveEventOptions = {
  heartbeatMs: 15_000,
  bufferBytes: 1024 * 1024,
  lingerMs: 10_000,
  readLimit: 500,
};

/** Waits before reading again while a commit announced is not readable yet, or the store failed; the last repeats. */
const RETRY_DELAYS_MS = [5, 10, 25, 50, 100, 250, 500, 1_000];

/** An event as streams send it: the frame is made once per hub and shared by its streams. */
interface LiveEvent {
  position: StreamPosition;
  gatewayId: string | null;
  frame: string;
}

/** The events of one read of a hub, and their frames joined (UTF-8). */
interface LiveBatch {
  events: readonly LiveEvent[];
  bytes: Buffer;
}

/** The SSE frame of an event: its cursor as `id:`, its JSON as `data:` (JSON text has no line breaks). */
function frameOf(key: Buffer, customerId: string, event: CommittedEvent): LiveEvent {
  return { position: event.position, gatewayId: event.gatewayId, frame: `id: ${encodeCursor(key, customerId, event.position)}\ndata: ${event.json}\n\n` };
}

/** The holder has as many live streams open on this instance as it may: none was opened. */
export class TooManyStreams extends Error {
  constructor(readonly limit: number) {
    super(`${limit} live streams open already`);
    this.name = 'TooManyStreams';
  }
}

/** What a stream asks of its request: whether its caller may still read events (re-checked at each heartbeat). */
export type AccessCheck = () => Promise<string | undefined>;

/**
 * The live streams of one server: their hubs, signals and counters. Emits `open` when a stream
 * has started (its first event is the next one stored), `cut` when one is cut off for reading too slowly.
 */
export class LiveEvents extends EventEmitter {
  readonly options: LiveEventOptions;
  /** Streams open now, opened since start, and cut off for reading too slowly. */
  readonly stats = { open: 0, opened: 0, cut: 0 };
  private readonly hubs = new Map<string, CustomerHub>();
  private readonly streams = new Set<LiveStream>();
  /** Streams open now per holder (the user whose token or key opened them). */
  private readonly held = new Map<string, number>();
  private stopSignals: (() => void) | undefined;
  private closed = false;
  log: Pick<FastifyBaseLogger, 'warn' | 'info'> = { warn: () => undefined, info: () => undefined };

  constructor(
    readonly store: Store,
    readonly key: Buffer,
    options: Partial<LiveEventOptions> = {},
  ) {
    super();
    this.options = { ...DEFAULT_LIVE_EVENT_OPTIONS, ...options };
  }

  /**
   * A stream of the customer's events (of one gateway, when given) after `from`, or from now: the
   * body of the response. Resolves once it knows where it starts.
   */
  async open(
    customerId: string,
    gatewayId: string | undefined,
    from: StreamPosition | undefined,
    resumedFrom: string | undefined,
    access: AccessCheck,
    holder: { id: string; limit: number },
  ): Promise<LiveStream> {
    if (this.closed) throw new Error('the server is shutting down');
    const holding = this.held.get(holder.id) ?? 0;
    if (holding >= holder.limit) throw new TooManyStreams(holder.limit);
    this.held.set(holder.id, holding + 1);
    this.listen();
    let hub = this.hubs.get(customerId);
    if (!hub) {
      hub = new CustomerHub(this, customerId);
      this.hubs.set(customerId, hub);
    }
    const stream = new LiveStream(this, hub, gatewayId, resumedFrom, access);
    hub.members.add(stream);
    this.streams.add(stream);
    this.stats.open++;
    this.stats.opened++;
    stream.once('close', () => {
      const left = this.held.get(holder.id)! - 1;
      if (left > 0) this.held.set(holder.id, left);
      else this.held.delete(holder.id);
      this.streams.delete(stream);
      this.stats.open--;
      hub.leave(stream);
      if (hub.members.size === 0 && this.hubs.get(customerId) === hub) {
        hub.stop();
        this.hubs.delete(customerId);
      }
    });
    try {
      await hub.ready;
      if (this.closed) throw new Error('the server is shutting down');
    } catch (error) {
      stream.destroy();
      throw error;
    }
    stream.start(from ?? hub.position);
    this.log.info({ customer_id: customerId, gateway_id: gatewayId, resumed: from !== undefined }, 'live event stream started');
    this.emit('open');
    return stream;
  }

  /** Ends every stream with a comment saying where to resume; a stream whose client does not take it is closed soon after. */
  close(): void {
    this.closed = true;
    this.stopSignals?.();
    for (const hub of this.hubs.values()) hub.stop();
    for (const stream of this.streams) stream.finish('server shutting down');
  }

  /** Hears commits (and listener gaps) from the first stream on. */
  private listen(): void {
    if (this.stopSignals) return;
    const stopCommits = this.store.signals.subscribe((signal: Signal) => {
      if (signal.kind !== 'events-committed') return;
      for (const customerId of signal.customers) this.hubs.get(customerId)?.wake(signal.through);
    });
    // Signals sent while the listener was away were not heard: every hub reads up to everything committed by now.
    const stopResume = this.store.signals.onResume(() => {
      this.store.eventLog.frontier().then(
        (frontier) => this.hubs.forEach((hub) => hub.wake(frontier)),
        () => this.hubs.forEach((hub) => hub.wake()),
      );
    });
    this.stopSignals = () => (stopCommits(), stopResume());
  }
}

/** The reader of one customer's new events on this instance, shared by all its streams. */
class CustomerHub {
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
    private readonly events: LiveEvents,
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
        if (read.events.length > 0) {
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

/**
 * One client's stream, the body of its response (a Readable that the response pipes): it reads
 * its own way from its start up to the hub, then takes the hub's events. What the client has not
 * taken yet waits here; past `bufferBytes` the stream is cut off (a live one) or waits (one
 * catching up reads on only when the client took what it had).
 */
export class LiveStream extends Readable {
  /** Where this stream has read up to (events after it are still to send). */
  private position: StreamPosition = [];
  /** The cursor of the last event sent, or the Last-Event-ID it resumed from. */
  private lastId: string | undefined;
  private state: 'starting' | 'catching-up' | 'live' | 'finished' = 'starting';
  private catchingUp = false;
  private heartbeat: NodeJS.Timeout | undefined;
  private linger: NodeJS.Timeout | undefined;

  constructor(
    private readonly events: LiveEvents,
    private readonly hub: CustomerHub,
    private readonly gatewayId: string | undefined,
    resumedFrom: string | undefined,
    private readonly access: AccessCheck,
  ) {
    super({ highWaterMark: 64 * 1024 });
    this.lastId = resumedFrom;
    this.once('close', () => {
      clearInterval(this.heartbeat);
      clearTimeout(this.linger);
      this.state = 'finished';
    });
  }

  /** Starts at the position: live at once when the hub is not behind it, else catching up first. */
  start(from: StreamPosition): void {
    this.position = from;
    this.push(': connected\n\n');
    this.heartbeat = setInterval(() => this.beat(), this.events.options.heartbeatMs);
    this.heartbeat.unref();
    this.state = 'catching-up';
    this.catchUp();
  }

  override _read(): void {
    // The client took what waited: a stream catching up reads on.
    if (this.state === 'catching-up') this.catchUp();
  }

  /** Events of the hub, in commit order; those up to this stream's position it has sent already. */
  deliver(batch: LiveBatch): void {
    if (this.state !== 'live') return;
    const { events } = batch;
    // What still waits from earlier deliveries: the client is not reading. (Measured before these
    // are added: a burst of one delivery waits here for a moment whatever the client's speed.)
    if (this.readableLength > this.events.options.bufferBytes) {
      this.events.stats.cut++;
      this.finish('too slow');
      this.events.emit('cut', this.lastId);
      return;
    }
    const last = events[events.length - 1]!;
    if (this.gatewayId === undefined && comparePositions(events[0]!.position, this.position) > 0) {
      // Every event of the read is new to this stream (the usual case): one write for all of them.
      this.position = last.position;
      this.push(batch.bytes);
      this.lastId = cursorOf(last);
      return;
    }
    for (const event of events) {
      if (comparePositions(event.position, this.position) <= 0) continue;
      this.position = event.position;
      if (this.gatewayId !== undefined && event.gatewayId !== this.gatewayId) continue;
      this.push(event.frame);
      this.lastId = cursorOf(event);
    }
  }

  /**
   * Ends the stream with a last comment that says why and where to resume; when the client does
   * not take it within `lingerMs`, the connection is closed all the same.
   */
  finish(why: string): void {
    if (this.state === 'finished') return;
    this.state = 'finished';
    this.hub.leave(this);
    clearInterval(this.heartbeat);
    this.push(`: ${why}${this.lastId ? `, resume with Last-Event-ID ${this.lastId}` : ''}\n\n`);
    this.push(null);
    this.linger = setTimeout(() => this.destroy(), this.events.options.lingerMs);
    this.linger.unref();
    this.once('end', () => clearTimeout(this.linger));
  }

  /** Reads from the store up to the hub's position, a read whenever the client has taken the previous one; then joins the hub. */
  private catchUp(): void {
    if (this.catchingUp) return;
    this.catchingUp = true;
    void (async () => {
      try {
        while (this.state === 'catching-up') {
          if (comparePositions(this.position, this.hub.position) >= 0) {
            // Synchronously with the check: no hub read can slip in between.
            this.state = 'live';
            this.hub.join(this);
            return;
          }
          const read = await this.events.store.eventLog.after(this.hub.customerId, this.position, this.events.options.readLimit, this.gatewayId);
          if (this.state !== 'catching-up') return;
          let room = true;
          if (read.events.length > 0) {
            const frames = read.events.map((event) => frameOf(this.events.key, this.hub.customerId, event));
            room = this.push(frames.map((frame) => frame.frame).join(''));
            this.lastId = cursorOf(frames[frames.length - 1]!);
          }
          this.position = laterPosition(this.position, read.reached);
          // The client has enough to read for now: _read calls again once it took it.
          if (!room) return;
        }
      } catch (error) {
        this.events.log.warn({ customer_id: this.hub.customerId, reason: (error as Error).message }, 'live events: catching up failed; retrying');
        setTimeout(() => this.catchUp(), RETRY_DELAYS_MS[RETRY_DELAYS_MS.length - 1]).unref();
      } finally {
        this.catchingUp = false;
      }
    })();
  }

  /** A heartbeat comment, and a check that the caller may still read events (a revoked key, a deleted user end the stream). */
  private beat(): void {
    this.push(': heartbeat\n\n');
    this.access().then(
      (refusal) => {
        if (refusal !== undefined) this.finish(`access ended: ${refusal}`);
      },
      () => undefined,
    );
  }
}

/** The `id:` of a frame. */
function cursorOf(event: LiveEvent): string {
  return event.frame.slice(4, event.frame.indexOf('\n'));
}
