import { Readable } from 'node:stream';
import { comparePositions, laterPosition, type StreamPosition } from '../../domain/stream-cursor.js';
import { RETRY_DELAYS_MS, cursorOf, frameOf, type LiveBatch, type LiveEventReader } from './frames.js';

/** What a stream asks of its request: whether its caller may still read events (re-checked at each heartbeat). */
export type AccessCheck = () => Promise<string | undefined>;

/** What a stream needs of its server's live events: what it reads with, and where to count it cut off. */
export interface LiveStreamHost extends LiveEventReader {
  /** The stream was cut off for reading too slowly; `lastId` is where its client resumes. */
  cut(lastId: string | undefined): void;
}

/** The hub a stream joins once it has caught up (customer-hub.ts). */
export interface StreamHub {
  readonly customerId: string;
  /** Every event up to here was read and handed to the live streams. */
  readonly position: StreamPosition;
  join(stream: LiveStream): void;
  leave(stream: LiveStream): void;
}

/**
 * One client's stream, the body of its response (a Readable that the response pipes): it reads
 * its own way from its start up to the hub, then takes the hub's events. What the client has not
 * taken yet waits here; past `bufferBytes` the stream is cut off (a live one) or waits (one
 * catching up reads on only when the client took what it had).
 */
/** What a stream carries: the events of the commit order, the alerts' frames, or both. */
export interface StreamWants {
  alerts: boolean;
  events: boolean;
}

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
    private readonly events: LiveStreamHost,
    private readonly hub: StreamHub,
    private readonly gatewayId: string | undefined,
    resumedFrom: string | undefined,
    private readonly access: AccessCheck,
    /** What the client asked for: alerts (`?alerts=true`), events (unless `?events=false`). */
    private readonly wants: StreamWants = { alerts: false, events: true },
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
    if (!this.wants.events) {
      // Alerts only: the stream stays a member of the hub for them and never reads or receives events.
      this.state = 'live';
      return;
    }
    this.state = 'catching-up';
    this.catchUp();
  }

  override _read(): void {
    // The client took what waited: a stream catching up reads on.
    if (this.state === 'catching-up') this.catchUp();
  }

  /** An alert's frame, when this stream asked for alerts and goes on. */
  sendAlert(frame: string): void {
    if (this.wants.alerts && this.state !== 'finished') this.push(frame);
  }

  /** Events of the hub, in commit order; those up to this stream's position it has sent already. */
  deliver(batch: LiveBatch): void {
    if (this.state !== 'live') return;
    const { events } = batch;
    // What still waits from earlier deliveries: the client is not reading. (Measured before these
    // are added: a burst of one delivery waits here for a moment whatever the client's speed.)
    if (this.readableLength > this.events.options.bufferBytes) {
      this.finish('too slow');
      this.events.cut(this.lastId);
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
