import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import { Outcome, type BatchResult, type CommittedEvents, type IngestMessage } from '../domain/ingest.js';
import type { StoreThread } from '../store/ports/index.js';
import type { DeletedBatch, StorageStatus, StoreLocator } from '../store/ports/index.js';
import { startIngestThread, type CommitBackend, type DeletionJob, type IngestThreads } from './ingest-thread.js';
import type { CreatedWindow } from '../domain/payload-limits.js';
import { QuarantinedPayloads } from './quarantine.js';

/** Counters of the ingest since start; tests and the log read them. */
export interface IngestStats {
  /** PUBLISH packets handed to the writer. */
  messages: number;
  /** Events stored (new ids). */
  events: number;
  /** Events already stored (the same customer, created and id: a QoS 1 redelivery): acknowledged, not stored again. */
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
  /** Device rows written: at most one per device per transaction with new events of it (docs/devices.md). */
  devices: number;
  /** Messages not acknowledged: the commit failed or the gateway was deleted meanwhile. */
  failed: number;
  /** Commits refused for lack of disk space, whose messages were kept (unacknowledged) and committed again later. */
  heldForSpace: number;
  /** Transactions committed. */
  batches: number;
}

/** Runs once the message's transaction committed (error null) or failed; `token` is the one given to submit. */
export type IngestCallback = (error: Error | null, token: number) => void;
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
  /** Most payload bytes queued while no writer thread runs or the disk is full (default MAX_QUEUED_BYTES_WRITER_DOWN). */
  maxQueuedBytesWriterDown?: number;
  /** Told when a commit was refused for lack of space (the server's store: /healthz, its probe). */
  storage?: Pick<StorageStatus, 'refused'>;
  /** How soon a commit refused for lack of space is tried again (default STORAGE_FULL_RETRY). */
  storageFullRetry?: { firstMs: number; maxMs: number };
  /** What an event's `created` may be (default DEFAULT_CREATED_WINDOW). */
  createdWindow?: CreatedWindow;
  /**
   * Told, once per batch the writer thread answered and that was settled, the seconds from handing
   * it over to its result (measured in this thread: the queueing, the commit and the way back);
   * /metrics' commit latency. A batch the thread died with, or held for a full disk, is not timed.
   */
  onCommit?: (seconds: number) => void;
  /**
   * Hears of committed events the store did not announce itself (BatchResult.unannounced: SQLite),
   * after their PUBACKs, with the events themselves when the batch asked for them (`handOff`).
   */
  onUnannounced?: (customers: string[], committed?: CommittedEvents) => void;
  /** Whether a batch is to come back with the events it stored (someone in this thread follows them: the webhooks). */
  handOff?: () => boolean;
}

/** A message of a batch the writer thread died with, waiting to be committed alone. */
interface Suspect {
  message: IngestMessage;
  done: IngestCallback;
  token: number;
}

/** Stands for the payload of a copy of a quarantined message: nothing of it crosses to the thread. */
const NO_PAYLOAD = new Uint8Array(0);

/**
 * While the writer thread restarts (it may keep dying), or while the disk is full, messages wait
 * in memory: past this many payload bytes new ones are refused (no PUBACK, the gateways
 * redeliver later) instead of growing the queue without bound.
 */
export const MAX_QUEUED_BYTES_WRITER_DOWN = 64 * 1024 * 1024;

/**
 * A commit refused for lack of space is tried again after 250 ms, then each 2 s at most: space
 * that returns is used within seconds, and a full disk costs one failing commit per 2 s.
 */
export const STORAGE_FULL_RETRY = { firstMs: 250, maxMs: 2000 };

// A dropped message is logged, but a device stuck sending garbage must not flood the log.
const DROPPED_LOG_INTERVAL = 10_000;

/**
 * The group-commit writer: messages queue up while the event loop reads sockets; at the next turn
 * (or as soon as the writer thread is free) the writer thread stores them in one transaction, and
 * only then are their callbacks (the PUBACKs) run; a failed commit calls back with an error. When
 * the writer thread dies with a batch, its messages are committed again one by one; one that kills
 * the thread alone is quarantined (docs/gateways-mqtt.md "Quarantine").
 */
export class IngestWriter {
  readonly stats: IngestStats = { messages: 0, events: 0, duplicates: 0, invalid: 0, quarantined: 0, retriedAlone: 0, reports: 0, devices: 0, failed: 0, heldForSpace: 0, batches: 0 };
  /** The writer and checkpointer threads: their state feeds /healthz. */
  readonly threads: IngestThreads;
  private queue: IngestMessage[] = [];
  private queuedBytes = 0;
  private callbacks: IngestCallback[] = [];
  /** The token of each queued callback (one callback serves many messages: no closure per message). */
  private tokens: number[] = [];
  /** Committed before the queue, one per batch. */
  private suspects: Suspect[] = [];
  private readonly quarantinedPayloads = new QuarantinedPayloads();
  private scheduled = false;
  private busy = false;
  private closed = false;
  /** Why commits are refused for lack of space, from the first refusal until a commit succeeds. */
  private full: string | undefined;
  private fullRetryMs = 0;
  private fullRetry: NodeJS.Timeout | undefined;
  /** Called once nothing is queued or in flight (idle() and close() wait for it). */
  private readonly idleWaiters: (() => void)[] = [];
  private readonly backend: CommitBackend;
  private readonly maxBatch: number;
  private readonly droppedLogged = new Map<string, { at: number; suppressed: number }>();
  private readonly flushSoon = () => this.flush();

  constructor(private readonly options: IngestOptions) {
    this.maxBatch = options.maxBatch ?? 4096;
    // With SQLite in its own thread, TLS and MQTT in this one, the two run on two cores; in one
    // thread the same load saturated one core well below target (bench/README.md "ingest").
    const backend = startIngestThread({ locator: options.locator, createdWindow: options.createdWindow }, options.maintenance ?? [], options.log, (reason) =>
      options.storage?.refused(reason),
    );
    this.backend = backend;
    this.threads = backend.threads;
  }

  /** Why commits are refused for lack of space (the messages are held for a retry); undefined while they are not. */
  held(): string | undefined {
    return this.full;
  }

  /** Queues one message of the gateway; `done(error, token)` runs after its transaction committed (or failed). */
  submit(gatewayId: string, payload: Buffer, done: IngestCallback, token = 0): void {
    if (this.closed) return done(new Error('the broker is shutting down'), token);
    this.stats.messages++;
    const writer = this.threads.writer;
    if ((writer.state !== 'running' || this.full) && this.queuedBytes + payload.length > (this.options.maxQueuedBytesWriterDown ?? MAX_QUEUED_BYTES_WRITER_DOWN)) {
      this.stats.failed++;
      const why = this.full ? `the disk is full (${this.full})` : `the ingest writer thread is ${writer.state}`;
      return done(new Error(`${why} and ${this.queuedBytes} bytes already wait for it`), token);
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
    this.tokens.push(token);
    if (!this.scheduled && !this.busy && !this.fullRetry) {
      this.scheduled = true;
      setImmediate(this.flushSoon);
    }
  }

  /** Hands what is queued to the backend, a batch at a time, unless a batch is in flight. */
  flush(): void {
    this.scheduled = false;
    // While a refused commit waits for its retry (the timer flushes), nothing else is sent.
    while (!this.busy && !this.fullRetry) {
      let batch: IngestMessage[];
      let callbacks: IngestCallback[];
      let tokens: number[];
      const fromSuspects = this.suspects.length > 0;
      if (fromSuspects) {
        // Alone: if it kills the thread again, it alone is to blame.
        const suspect = this.suspects.shift()!;
        batch = [suspect.message];
        callbacks = [suspect.done];
        tokens = [suspect.token];
      } else if (this.queue.length > 0) {
        batch = this.queue.length <= this.maxBatch ? this.queue : this.queue.slice(0, this.maxBatch);
        callbacks = this.callbacks.slice(0, batch.length);
        tokens = this.tokens.slice(0, batch.length);
        if (batch === this.queue) this.queue = [];
        else this.queue = this.queue.slice(batch.length);
        for (const message of batch) this.queuedBytes -= message.payload.length;
        this.callbacks = this.callbacks.slice(batch.length);
        this.tokens = this.tokens.slice(batch.length);
      } else break;
      this.busy = true;
      let inline = true;
      const handedOver = performance.now();
      const handOff = this.options.handOff?.() ?? false;
      this.backend.commit(batch, (result) => {
        this.busy = false;
        if (result.crash) this.suspect(batch, callbacks, tokens, result.crash);
        else if (result.storageFull && !this.closed) this.hold(batch, callbacks, tokens, result, fromSuspects);
        else {
          const seconds = (performance.now() - handedOver) / 1000;
          if (this.full && !result.outcomes.every((outcome) => outcome === Outcome.FAILED)) this.writable();
          this.settle(batch, callbacks, tokens, result);
          this.options.onCommit?.(seconds);
        }
        // A thread result arrives on its own turn: send what queued up meanwhile right away. An
        // answer given at once (no thread left, at shutdown) lets this loop go on instead, so
        // that thousands of suspects failing one by one do not recurse.
        if (!inline && !this.scheduled) this.flush();
      }, handOff);
      inline = false;
    }
    if (this.isIdle()) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /**
   * Resolves once everything queued so far is committed (or refused) and its callbacks ran: the
   * PUBACKs of a shutdown's drain. Not while messages wait for a full disk or a writer thread.
   */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private isIdle(): boolean {
    return !this.busy && this.queue.length === 0 && this.suspects.length === 0;
  }

  /**
   * Deletes one batch of old events in the writer thread, between two of its commits (docs/retention.md):
   * on SQLite with the writer's own connection, so the deletion never makes a commit wait for the lock.
   */
  deleteEvents(job: DeletionJob): Promise<DeletedBatch> {
    if (this.closed) return Promise.reject(new Error('the broker is shutting down'));
    return this.backend.deleteEvents(job);
  }

  /** Groups of the writes of command and webhook delivery, run in the writer thread between two commits (docs/commands.md, docs/webhooks.md "Delivery"). */
  get deliveryWrites(): Pick<CommitBackend, 'commandWrites' | 'webhookWrites'> {
    return this.backend;
  }

  /** Stops taking messages, commits what is queued, stops the writer thread. */
  async close(): Promise<void> {
    this.closed = true;
    // Messages kept for a full disk get one more commit now; refused again, they go unacknowledged.
    clearTimeout(this.fullRetry);
    this.fullRetry = undefined;
    // A writer thread that dies now is not replaced: what it had and what is queued is not
    // acknowledged, and the gateways redeliver it to the next start (rather than close() waiting out a back-off).
    this.backend.stopRestarts();
    const idle = this.idle();
    this.flush();
    await idle;
    await this.backend.close();
    this.options.log.info({ ingest: this.stats }, 'ingest closed');
  }

  /** Counts and logs the batch's result, then runs its callbacks (the PUBACKs), whatever the counting did. */
  private settle(batch: IngestMessage[], callbacks: IngestCallback[], tokens: number[], result: BatchResult): void {
    try {
      this.account(batch, result);
    } catch (error) {
      this.options.log.error({ err: error }, 'ingest could not count or log a batch');
    }
    for (let i = 0; i < callbacks.length; i++) callbacks[i]!(this.errorOf(result, i), tokens[i]!);
    if (result.unannounced?.length) this.options.onUnannounced?.(result.unannounced, result.committed);
  }

  /**
   * The writer thread died with the batch: its messages go back, ahead of the queue, to be
   * committed one by one. A message that was alone in the hands of a thread that had opened the
   * database is the cause: it is quarantined (kept as a dead letter, then acknowledged), and a
   * copy of it never reaches the thread again. A thread that died at its start blames nobody.
   */
  private suspect(batch: IngestMessage[], callbacks: IngestCallback[], tokens: number[], crash: NonNullable<BatchResult['crash']>): void {
    const [first] = batch;
    if (batch.length === 1 && crash.whileRunning && !first!.quarantine) {
      first!.quarantine = { reason: `crashed the ingest writer thread: ${crash.cause}`, at: this.options.clock() };
      this.quarantinedPayloads.add(first!.payload);
    } else if (batch.length > 1) {
      this.stats.retriedAlone += batch.length;
      this.options.log.warn({ messages: batch.length, reason: crash.cause }, 'ingest writer thread died with a batch: committing its messages one by one');
    }
    this.suspects.unshift(...batch.map((message, i) => ({ message, done: callbacks[i]!, token: tokens[i]! })));
  }

  /**
   * The commit was refused for lack of space: what was decided before the first refused message
   * is settled; the refused messages go back, unacknowledged and in order, ahead of the queue (or
   * of the suspects), and are committed again after a back-off (STORAGE_FULL_RETRY). Nothing
   * flushes meanwhile; new messages wait behind them, within MAX_QUEUED_BYTES_WRITER_DOWN.
   */
  private hold(batch: IngestMessage[], callbacks: IngestCallback[], tokens: number[], result: BatchResult, suspects: boolean): void {
    const first = result.outcomes.indexOf(Outcome.FAILED);
    const cut = first < 0 ? batch.length : first;
    if (cut > 0) {
      const decided: BatchResult = { ...result, outcomes: result.outcomes.slice(0, cut), reasons: result.reasons.slice(0, cut) };
      this.settle(batch.slice(0, cut), callbacks.slice(0, cut), tokens.slice(0, cut), decided);
    }
    const kept = batch.slice(cut);
    const keptCallbacks = callbacks.slice(cut);
    const keptTokens = tokens.slice(cut);
    if (suspects) this.suspects.unshift(...kept.map((message, i) => ({ message, done: keptCallbacks[i]!, token: keptTokens[i]! })));
    else {
      this.queue = [...kept, ...this.queue];
      this.callbacks = [...keptCallbacks, ...this.callbacks];
      this.tokens = [...keptTokens, ...this.tokens];
      for (const message of kept) this.queuedBytes += message.payload.length;
    }
    this.stats.heldForSpace++;
    const retry = this.options.storageFullRetry ?? STORAGE_FULL_RETRY;
    if (!this.full) {
      this.full = result.storageFull!;
      this.fullRetryMs = retry.firstMs;
      this.options.log.error(
        { messages: kept.length, reason: result.reasons[cut] },
        'the disk is full: messages kept unacknowledged and committed again once there is space',
      );
    } else this.fullRetryMs = Math.min(this.fullRetryMs * 2, retry.maxMs);
    this.options.storage?.refused(result.storageFull!);
    this.fullRetry = setTimeout(() => {
      this.fullRetry = undefined;
      this.flush();
    }, this.fullRetryMs);
  }

  /** A commit went through after the disk was full. */
  private writable(): void {
    this.options.log.info({ refused_since: this.full }, 'the disk has space again: ingest commits and acknowledges');
    this.full = undefined;
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
    stats.devices += result.devices;
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
