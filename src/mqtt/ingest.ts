import type { FastifyBaseLogger } from 'fastify';
import { Outcome, type BatchResult, type IngestMessage } from './commit.js';
import { startIngestThread, type CommitBackend, type IngestThreads } from './ingest-thread.js';

/** Counters of the ingest since start; tests and the log read them. */
export interface IngestStats {
  /** PUBLISH packets handed to the writer. */
  messages: number;
  /** Events stored (new ids). */
  events: number;
  /** Events whose id was already stored (QoS 1 redelivery): acknowledged, not stored again. */
  duplicates: number;
  /** Messages acknowledged and dropped: bad JSON, wrong field types, unknown type. */
  invalid: number;
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
  /** The deployment database file: the writer thread opens its own connection to it. */
  databaseFile: string;
  clock: () => number;
  log: IngestLog;
  /** Most messages in one transaction (default 4096): bounds the latency one commit adds. */
  maxBatch?: number;
  /** Most payload bytes queued while no writer thread runs (default MAX_QUEUED_BYTES_WRITER_DOWN). */
  maxQueuedBytesWriterDown?: number;
}

/**
 * While the writer thread restarts (it may keep dying, e.g. on a disk that refuses the
 * database), messages wait in memory: past this many payload bytes new ones are refused (no
 * PUBACK, the gateways redeliver later) instead of growing the queue without bound.
 */
export const MAX_QUEUED_BYTES_WRITER_DOWN = 64 * 1024 * 1024;

// An invalid message is logged, but a device stuck sending garbage must not flood the log.
const INVALID_LOG_INTERVAL = 10_000;

/**
 * The group-commit writer: messages queue up while the event loop reads sockets; at the next
 * turn (or as soon as the writer thread is free) the writer thread stores them in one
 * transaction, and only then are their callbacks (the PUBACKs) run. A failed commit calls back with an error, so
 * nothing unstored is acknowledged.
 */
export class IngestWriter {
  readonly stats: IngestStats = { messages: 0, events: 0, duplicates: 0, invalid: 0, reports: 0, failed: 0, batches: 0 };
  /** The writer and checkpointer threads: their state feeds /healthz. */
  readonly threads: IngestThreads;
  private queue: IngestMessage[] = [];
  private queuedBytes = 0;
  private callbacks: IngestCallback[] = [];
  private scheduled = false;
  private busy = false;
  private closed = false;
  private drained?: () => void;
  private readonly backend: CommitBackend;
  private readonly maxBatch: number;
  private readonly invalidLogged = new Map<string, { at: number; suppressed: number }>();
  private readonly flushSoon = () => this.flush();

  constructor(private readonly options: IngestOptions) {
    this.maxBatch = options.maxBatch ?? 4096;
    // Measured (bench/README.md): with SQLite in its own thread, TLS and MQTT in this one, the
    // two run on two cores; in one thread the same load saturated one core well below target.
    const backend = startIngestThread(options.databaseFile, options.log);
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
    this.queuedBytes += payload.length;
    this.queue.push({ gatewayId, receivedAt: this.options.clock(), payload });
    this.callbacks.push(done);
    if (!this.scheduled && !this.busy) {
      this.scheduled = true;
      setImmediate(this.flushSoon);
    }
  }

  /** Hands what is queued to the backend, a batch at a time, unless a batch is in flight. */
  flush(): void {
    this.scheduled = false;
    while (!this.busy && this.queue.length > 0) {
      const batch = this.queue.length <= this.maxBatch ? this.queue : this.queue.slice(0, this.maxBatch);
      const callbacks = this.callbacks.slice(0, batch.length);
      if (batch === this.queue) this.queue = [];
      else this.queue = this.queue.slice(batch.length);
      for (const message of batch) this.queuedBytes -= message.payload.length;
      this.callbacks = this.callbacks.slice(batch.length);
      this.busy = true;
      this.backend.commit(batch, (result) => {
        this.busy = false;
        this.account(batch, result);
        for (let i = 0; i < callbacks.length; i++) callbacks[i]!(this.errorOf(result, i));
        // A thread result arrives on its own turn: send what queued up meanwhile right away.
        if (!this.scheduled) this.flush();
      });
    }
    if (!this.busy && this.queue.length === 0) this.drained?.();
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

  private errorOf(result: BatchResult, index: number): Error | null {
    const outcome = result.outcomes[index];
    return outcome === Outcome.STORED || outcome === Outcome.INVALID ? null : new Error(result.reasons[index]);
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
        this.logInvalid(batch[i]!.gatewayId, result.reasons[i]!);
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

  private logInvalid(gatewayId: string, reason: string): void {
    const now = this.options.clock();
    const last = this.invalidLogged.get(gatewayId);
    if (last && now - last.at < INVALID_LOG_INTERVAL) {
      last.suppressed++;
      return;
    }
    const suppressed = last?.suppressed ?? 0;
    this.invalidLogged.set(gatewayId, { at: now, suppressed: 0 });
    this.options.log.warn({ gateway_id: gatewayId, reason, suppressed }, 'invalid message acknowledged and dropped');
  }
}
