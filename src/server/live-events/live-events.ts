import { EventEmitter } from 'node:events';
import type { FastifyBaseLogger } from 'fastify';
import type { StreamPosition } from '../../domain/stream-cursor.js';
import type { Signal, Store } from '../../store/ports/index.js';
import { CustomerHub } from './customer-hub.js';
import { DEFAULT_LIVE_EVENT_OPTIONS, type LiveEventOptions } from './frames.js';
import { LiveStream, type AccessCheck, type LiveStreamHost, type StreamWants } from './live-stream.js';

export { DEFAULT_LIVE_EVENT_OPTIONS, type LiveEventOptions } from './frames.js';

/**
 * Live events (docs/events.md "Live events"): one hub per customer reads its new events once after
 * each commit signal and hands them to all its streams on this instance; a stream that starts
 * behind reads its own way up to the hub first (customer-hub.ts, live-stream.ts).
 */

/** The holder has as many live streams open on this instance as it may: none was opened. */
export class TooManyStreams extends Error {
  constructor(readonly limit: number) {
    super(`${limit} live streams open already`);
    this.name = 'TooManyStreams';
  }
}

/**
 * The live streams of one server: their hubs, signals and counters. Emits `open` when a stream
 * has started (its first event is the next one stored), `cut` when one is cut off for reading too slowly.
 */
export class LiveEvents extends EventEmitter implements LiveStreamHost {
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
    wants: StreamWants = { alerts: false, events: true },
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
    const stream = new LiveStream(this, hub, gatewayId, resumedFrom, access, wants);
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

  /** A stream was cut off for reading too slowly: counted, and told to `cut` listeners with where its client resumes. */
  cut(lastId: string | undefined): void {
    this.stats.cut++;
    this.emit('cut', lastId);
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
      if (signal.kind === 'alert-changed') {
        // Out of the commit order: an `event: alert` frame without an id, to the streams that asked for alerts.
        const frame = `event: alert\ndata: ${JSON.stringify(signal.alert)}\n\n`;
        for (const stream of this.hubs.get(signal.customer_id)?.members ?? []) stream.sendAlert(frame);
        return;
      }
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
