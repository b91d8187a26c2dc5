import type { FastifyBaseLogger } from 'fastify';
import { Outcome, type BatchResult, type IngestMessage } from '../domain/ingest.js';
import type { StoreThread } from '../store/open.js';
import type { StoreLocator } from '../store/ports.js';
import { startIngestThread, type CommitBackend, type IngestThreads } from './ingest-thread.js';
import type { CreatedWindow } from '../domain/payload-limits.js';
import { QuarantinedPayloads } from './quarantine.js';

/** Counters of the ingest since start; tests and the log read them. */
export interface IngestStats {
  /** PUBLISH packets handed to the writer. */
  messages: number;
  /** Events stored (new ids). */
  events: number;
  /** Events whose id was already stored (QoS 1 redelivery): acknowledged, not stored again. */
  duplicates: number;
  /** Messages acknowledged and dropped: bad JSON, wrong field types, unknown type, over a limit. */
  invalid: number;
  /**
   * Messages acknowledged and kept as dead letters because the writer thread died with each of
   * them alone, and copies of those (acknowledged, not kept again).
   */
  quarantined: number;
  /** Messages of batches the writer thread died with, committed again one by one. */
  retriedAlone: number;
  /** `class: "gateway"` reports that changed a gateway record. */
  reports: number;
  /** Messages not acknowledged: the commit failed or the gateway was deleted meanwhile. */
  failed: number;
  /** Transactions committed. */
  batches: number;
}

export type IngestCallback = (error: Error | null) => void;
export type IngestLog = Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;

export interface IngestOptions {
  /** The deployment's store: the writer thread opens its own connection to it. */
  locator: StoreLocator;
  /** Threads the store needs beside the writer (ingestMaintenance: SQLite's checkpointer). */
  maintenance?: StoreThread[];
  clock: () => number;
  log: IngestLog;
  /** Most messages in one transaction (default 4096): bounds the latency one commit adds. */
  maxBatch?: number;
  /** Most payload bytes queued while no writer thread runs (default MAX_QUEUED_BYTES_WRITER_DOWN). */
  maxQueuedBytesWriterDown?: number;
  /** What an event's `created` may be (default DEFAULT_CREATED_WINDOW). */
  createdWindow?: CreatedWindow;
  /** Hears of committed events the store did not announce itself (BatchResult.unannounced: SQLite), after their PUBACKs. */
  onUnannounced?: (customers: string[]) => void;
}

/** A message of a batch the writer thread died with, waiting to be committed alone. */
interface Suspect {
  message: IngestMessage;
  done: IngestCallback;
}

/** Stands for the payload of a copy of a quarantined message: nothing of it crosses to the thread. */
const NO_PAYLOAD = new Uint8Array(0);

/**
 * While the writer thread restarts (it may keep dying, e.g. on a disk that refuses the
 * database), messages wait in memory: past this many payload bytes new ones are refused (no
 * PUBACK, the gateways redeliver later) instead of growing the queue without bound.
 */
export const MAX_QUEUED_BYTES_WRITER_DOWN = 64 * 1024 * 1024;

// A dropped message is logged, but a device stuck sending garbage must not flood the log.
const DROPPED_LOG_INTERVAL = 10_000;

/**
 * The group-commit writer: messages queue up while the event loop reads sockets; at the next
 * turn (or as soon as the writer thread is free) the writer thread stores them in one
 * transaction, and only then are their callbacks (the PUBACKs) run. A failed commit calls back with an error, so
 * nothing unstored is acknowledged. When the writer thread dies with a batch, its messages are
 * committed again one by one; one that kills the thread alone is quarantined (docs/gateways-mqtt.md).
 */
export class IngestWriter {
  readonly stats: IngestStats = { messages: 0, events: 0, duplicates: 0, invalid: 0, quarantined: 0, retriedAlone: 0, reports: 0, failed: 0, batches: 0 };
  /** The writer and checkpointer threads: their state feeds /healthz. */
  readonly threads: IngestThreads;
  private queue: IngestMessage[] = [];
  private queuedBytes = 0;
  private callbacks: IngestCallback[] = [];
  /** Committed before the queue, one per batch. */
  private suspects: Suspect[] = [];
  private readonly quarantinedPayloads = new QuarantinedPayloads();
  private scheduled = false;
  private busy = false;
  private closed = false;
  private drained?: () => void;
  private readonly backend: CommitBackend;
  private readonly maxBatch: number;
  private readonly droppedLogged = new Map<string, { at: number; suppressed: number }>();
  private readonly flushSoon = () => this.flush();

  constructor(private readonly options: IngestOptions) {
    this.maxBatch = options.maxBatch ?? 4096;
    // Measured (bench/README.md): with SQLite in its own thread, TLS and MQTT in this one, the
    // two run on two cores; in one thread the same load saturated one core well below target.
    const backend = startIngestThread({ locator: options.locator, createdWindow: options.createdWindow }, options.maintenance ?? [], options.log);
    this.backend = backend;
    this.threads = backend.threads;
  }

  /** Queues one message of the gateway; `done` runs after its transaction committed (or failed). */
  submit(gatewayId: string, payload: Buffer, done: IngestCallback): void {
    if (this.closed) return done(new Error('the broker is shutting down'));
    this.stats.messages++;
    const writer = this.threads.writer;
    if (writer.state !== 'running' && this.queuedBytes + payload.length > (this.options.maxQueuedBytesWriterDown ?? MAX_QUEUED_BYTES_WRITER_DOWN)) {
      this.stats.failed++;
      return done(new Error(`the ingest writer thread is ${writer.state} and ${this.queuedBytes} bytes already wait for it`));
    }
    const receivedAt = this.options.clock();
    if (this.quarantinedPayloads.has(payload)) {
      // Queued all the same: PUBACKs go out in the order of the PUBLISHes ([MQTT-4.6.0-2]).
      this.queue.push({ gatewayId, receivedAt, payload: NO_PAYLOAD, quarantine: { reason: 'a copy of a quarantined message', at: receivedAt, copy: true } });
    } else {
      this.queuedBytes += payload.length;
      this.queue.push({ gatewayId, receivedAt, payload });
    }
    this.callbacks.push(done);
    if (!this.scheduled && !this.busy) {
      this.scheduled = true;
      setImmediate(this.flushSoon);
    }
  }

  /** Hands what is queued to the backend, a batch at a time, unless a batch is in flight. */
  flush(): void {
    this.scheduled = false;
    while (!this.busy) {
      let batch: IngestMessage[];
      let callbacks: IngestCallback[];
      if (this.suspects.length > 0) {
        // Alone: if it kills the thread again, it alone is to blame.
        const suspect = this.suspects.shift()!;
        batch = [suspect.message];
        callbacks = [suspect.done];
      } else if (this.queue.length > 0) {
        batch = this.queue.length <= this.maxBatch ? this.queue : this.queue.slice(0, this.maxBatch);
        callbacks = this.callbacks.slice(0, batch.length);
        if (batch === this.queue) this.queue = [];
        else this.queue = this.queue.slice(batch.length);
        for (const message of batch) this.queuedBytes -= message.payload.length;
        this.callbacks = this.callbacks.slice(batch.length);
      } else break;
      this.busy = true;
      let inline = true;
      this.backend.commit(batch, (result) => {
        this.busy = false;
        if (result.crash) this.suspect(batch, callbacks, result.crash);
        else this.settle(batch, callbacks, result);
        // A thread result arrives on its own turn: send what queued up meanwhile right away. An
        // answer given at once (no thread left, at shutdown) lets this loop go on instead, so
        // that thousands of suspects failing one by one do not recurse.
        if (!inline && !this.scheduled) this.flush();
      });
      inline = false;
    }
    if (!this.busy && this.queue.length === 0 && this.suspects.length === 0) this.drained?.();
  }

  /** Stops taking messages, commits what is queued, stops the writer thread. */
  async close(): Promise<void> {
    this.closed = true;
    // A writer thread that dies now is not replaced: what it had and what is queued is not
    // acknowledged, and the gateways redeliver it to the next start (rather than close() waiting out a back-off).
    this.backend.stopRestarts();
    await new Promise<void>((resolve) => {
      this.drained = resolve;
      this.flush();
    });
    await this.backend.close();
    this.options.log.info({ ingest: this.stats }, 'ingest closed');
  }

  /** Counts and logs the batch's result, then runs its callbacks (the PUBACKs), whatever the counting did. */
  private settle(batch: IngestMessage[], callbacks: IngestCallback[], result: BatchResult): void {
    try {
      this.account(batch, result);
    } catch (error) {
      this.options.log.error({ err: error }, 'ingest could not count or log a batch');
    }
    for (let i = 0; i < callbacks.length; i++) callbacks[i]!(this.errorOf(result, i));
    if (result.unannounced?.length) this.options.onUnannounced?.(result.unannounced);
  }

  /**
   * The writer thread died with the batch: its messages go back, ahead of the queue, to be
   * committed one by one. A message that was alone in the hands of a thread that had opened the
   * database is the cause: it is quarantined (kept as a dead letter, then acknowledged), and a
   * copy of it never reaches the thread again. A thread that died at its start blames nobody.
   */
  private suspect(batch: IngestMessage[], callbacks: IngestCallback[], crash: NonNullable<BatchResult['crash']>): void {
    const [first] = batch;
    if (batch.length === 1 && crash.whileRunning && !first!.quarantine) {
      first!.quarantine = { reason: `crashed the ingest writer thread: ${crash.cause}`, at: this.options.clock() };
      this.quarantinedPayloads.add(first!.payload);
    } else if (batch.length > 1) {
      this.stats.retriedAlone += batch.length;
      this.options.log.warn({ messages: batch.length, reason: crash.cause }, 'ingest writer thread died with a batch: committing its messages one by one');
    }
    this.suspects.unshift(...batch.map((message, i) => ({ message, done: callbacks[i]! })));
  }

  private errorOf(result: BatchResult, index: number): Error | null {
    const outcome = result.outcomes[index];
    return outcome === Outcome.STORED || outcome === Outcome.INVALID || outcome === Outcome.QUARANTINED ? null : new Error(result.reasons[index]);
  }

  private account(batch: IngestMessage[], result: BatchResult): void {
    const stats = this.stats;
    stats.batches++;
    stats.events += result.events;
    stats.duplicates += result.duplicates;
    stats.reports += result.reports;
    let failed = 0;
    let firstFailure = -1;
    for (let i = 0; i < batch.length; i++) {
      const outcome = result.outcomes[i];
      if (outcome === Outcome.STORED) continue;
      if (outcome === Outcome.INVALID) {
        stats.invalid++;
        this.logDropped(batch[i]!.gatewayId, result.reasons[i]!, 'invalid message acknowledged and dropped');
      } else if (outcome === Outcome.QUARANTINED) {
        stats.quarantined++;
        const { gatewayId, quarantine } = batch[i]!;
        if (quarantine!.copy) this.logDropped(gatewayId, quarantine!.reason, 'quarantined message acknowledged and dropped');
        else {
          this.options.log.error(
            { gateway_id: gatewayId, dead_letter: Number(result.reasons[i]), reason: quarantine!.reason },
            'message quarantined: kept as a dead letter and acknowledged',
          );
        }
      } else {
        if (failed++ === 0) firstFailure = i;
      }
    }
    if (failed > 0) {
      stats.failed += failed;
      // One line per batch: a full disk fails every message of it for the same reason.
      this.options.log.error(
        { messages: failed, gateway_id: batch[firstFailure]!.gatewayId, reason: result.reasons[firstFailure] },
        'messages not stored and not acknowledged',
      );
    }
  }

  /** Logs a dropped message: at most one line per gateway per 10 s, with the number suppressed since the last. */
  private logDropped(gatewayId: string, reason: string, message: string): void {
    const now = this.options.clock();
    const last = this.droppedLogged.get(gatewayId);
    if (last && now - last.at < DROPPED_LOG_INTERVAL) {
      last.suppressed++;
      return;
    }
    const suppressed = last?.suppressed ?? 0;
    this.droppedLogged.set(gatewayId, { at: now, suppressed: 0 });
    this.options.log.warn({ gateway_id: gatewayId, reason, suppressed }, message);
  }
}
