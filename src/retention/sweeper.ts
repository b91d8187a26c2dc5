import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DELETION_START,
  FIRST_BATCH,
  MAX_HOLD_MS,
  TARGET_HOLD_MS,
  nextBatchSize,
  pauseAfter,
  retentionCutoff,
} from '../domain/retention.js';
import type { CreatedIdKey } from '../domain/page-token.js';
import type { DeletedBatch, RetentionDeletion, Store } from '../store/ports/index.js';

/** How often every instance looks for events past their customer's period. */
export const RETENTION_INTERVAL_MS = 10 * 60_000;
/** The shortest pause between two batches (domain/retention.ts pauseAfter). */
export const MIN_PAUSE_MS = 5;
/** How often a running pass re-reads the customer's period: a longer one, or `null`, set meanwhile takes effect within this. */
export const RECHECK_MS = 1000;
/** How often a long pass logs its progress. */
export const PROGRESS_LOG_MS = 60_000;

export interface RetentionLog {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** Where a batch stands, for tests that act while a pass runs. */
export interface BatchProgress {
  customerId: string;
  /** Batches of this customer's pass so far, this one included. */
  batch: number;
  /** Events this batch deleted, and the pass so far. */
  deleted: number;
  total: number;
  holdMs: number;
}

/** Timings a deployment may change (tests shorten them; `serve` uses the defaults). */
export interface RetentionOptions {
  /** How long a batch should hold the writer (TARGET_HOLD_MS). */
  targetHoldMs?: number;
  /** The shortest pause between batches (MIN_PAUSE_MS). */
  minPauseMs?: number;
  /** Events a pass deletes per second at most (MAX_DELETED_PER_SECOND). */
  maxDeletedPerSecond?: number;
  /** How often a pass runs (RETENTION_INTERVAL_MS). */
  intervalMs?: number;
  /** How often a running pass re-reads the period (RECHECK_MS). */
  recheckMs?: number;
  /** Tests only: runs after each batch that deleted something, before the pause; the pass waits for it. */
  onBatch?: (progress: BatchProgress) => void | Promise<void>;
}

export interface RetentionSweeperOptions extends RetentionOptions {
  store: Pick<Store, 'retention' | 'locks' | 'provisioning'>;
  /** The deployment's time: the cutoffs and the times recorded. */
  clock: () => number;
}

/**
 * Where a batch runs: by default the store's own `retention.deleteEventsBefore`; `serve` hands in
 * the ingest writer thread's (MqttBroker.deleteEvents), which deletes between its commits.
 */
export type BatchRunner = (customerId: string, cutoff: number, limit: number, after: CreatedIdKey) => Promise<DeletedBatch>;

/** What a pass did for one customer; `stopped` when the server stopped it before it finished (then nothing was recorded). */
export interface CustomerDeletion {
  customerId: string;
  deletion: RetentionDeletion;
  stopped: boolean;
}

/**
 * A pass: it ran (under the lock) and did this, or another instance held the lock and this one
 * left the round to it. `erasedKeys`: sealed gateway keys of expired provisioning tokens erased.
 */
export type RetentionPass = { ran: true; customers: CustomerDeletion[]; erasedKeys: number } | { ran: false };

/**
 * Deletes events past each customer's retention period (docs/retention.md), after erasing the sealed
 * keys of provisioning tokens that expired unused: a pass at start, every RETENTION_INTERVAL_MS and
 * soon after a period is set, under the `retention` lock (one instance at a time). Batches hold the
 * writer about TARGET_HOLD_MS each, with pauses at least as long (ingest and HTTP writes get the
 * writer in between) and long enough to stay under MAX_DELETED_PER_SECOND (ingest keeps the disk).
 */
export class RetentionSweeper {
  private chain: Promise<unknown> = Promise.resolve();
  /** A pass asked for that has not started yet: later requests join it. */
  private queued: Promise<RetentionPass> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private log: RetentionLog | undefined;
  private runBatch: BatchRunner;

  constructor(private readonly options: RetentionSweeperOptions) {
    this.runBatch = (customerId, cutoff, limit, after) => options.store.retention.deleteEventsBefore(customerId, cutoff, limit, after);
  }

  /** Runs a pass now and then every interval, logging to `log`; batches run in `runBatch` when given. */
  start(log?: RetentionLog, runBatch?: BatchRunner): void {
    this.log = log;
    if (runBatch) this.runBatch = runBatch;
    this.wake();
    this.timer = setInterval(() => this.wake(), this.options.intervalMs ?? RETENTION_INTERVAL_MS).unref();
  }

  /** Asks for a pass soon (a period was set): at most one waits behind a running pass. Failures are logged. */
  wake(): void {
    this.next().catch((error: unknown) => {
      // Retried at the next interval; it must not take the server down.
      this.log?.error({ err: error }, 'deleting old events failed');
    });
  }

  /** A pass that starts after this call (once a running one finished); resolves with what it did. */
  run(): Promise<RetentionPass> {
    return this.next();
  }

  /** Resolves once no pass runs or waits (tests: after a change of period, its pass has finished). */
  async idle(): Promise<void> {
    let chain;
    do {
      chain = this.chain;
      await chain;
    } while (chain !== this.chain);
  }

  /** Stops: the running pass stops after its current batch, and no other starts. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.chain;
  }

  private next(): Promise<RetentionPass> {
    if (this.queued) return this.queued;
    const pass = this.chain.then(() => {
      this.queued = undefined;
      return this.pass();
    });
    this.queued = pass;
    this.chain = pass.catch(() => undefined);
    return pass;
  }

  private async pass(): Promise<RetentionPass> {
    if (this.closed) return { ran: false };
    const { store } = this.options;
    const outcome = await store.locks.tryRun('retention', async () => {
      const erasedKeys = await store.provisioning.purgeExpired(this.options.clock());
      if (erasedKeys > 0) this.log?.info({ erasedKeys }, 'sealed keys of expired provisioning tokens erased');
      const customers: CustomerDeletion[] = [];
      for (const { customerId, eventsDays } of await store.retention.periods()) {
        if (this.closed) break;
        customers.push(await this.deleteOld(customerId, eventsDays));
      }
      return { customers, erasedKeys };
    });
    if (!outcome.ran) {
      this.log?.info({}, 'another instance is deleting old events: this one leaves the round to it');
      return { ran: false };
    }
    return { ran: true, ...outcome.value };
  }

  /** Deletes the customer's events older than its period, batch by batch; records the pass unless stopped. */
  private async deleteOld(customerId: string, eventsDays: number): Promise<CustomerDeletion> {
    const { store, clock, onBatch } = this.options;
    const targetMs = this.options.targetHoldMs ?? TARGET_HOLD_MS;
    const minPauseMs = this.options.minPauseMs ?? MIN_PAUSE_MS;
    const started = clock();
    const began = performance.now();
    let cutoff = retentionCutoff(started, eventsDays);
    let size = FIRST_BATCH;
    let after = DELETION_START;
    let deleted = 0;
    let batches = 0;
    let longest = 0;
    let checked = began;
    let logged = began;
    let stopped = false;
    for (;;) {
      if (this.closed) {
        stopped = true;
        break;
      }
      let batch: DeletedBatch;
      try {
        batch = await this.runBatch(customerId, cutoff, size, after);
      } catch (error) {
        // The writer thread closes with the server: a batch refused then is a stop, not a failure.
        if (!this.closed) throw error;
        stopped = true;
        break;
      }
      if (batch.last) after = batch.last;
      if (batch.deleted > 0) {
        batches++;
        deleted += batch.deleted;
        longest = Math.max(longest, batch.holdMs);
        if (batch.holdMs > MAX_HOLD_MS) {
          this.log?.warn({ customer: customerId, rows: batch.deleted, holdMs: round(batch.holdMs) }, `a batch of old events held the writer longer than ${MAX_HOLD_MS} ms`);
        }
        await onBatch?.({ customerId, batch: batches, deleted: batch.deleted, total: deleted, holdMs: batch.holdMs });
      }
      if (batch.deleted < size) break;
      size = nextBatchSize(size, batch.deleted, batch.holdMs, targetMs);
      await sleep(pauseAfter(batch.holdMs, batch.deleted, minPauseMs, this.options.maxDeletedPerSecond));
      const now = performance.now();
      if (now - logged >= PROGRESS_LOG_MS) {
        logged = now;
        this.log?.info({ customer: customerId, deleted, batches, longestBatchMs: round(longest) }, 'deleting old events');
      }
      if (now - checked >= (this.options.recheckMs ?? RECHECK_MS)) {
        checked = now;
        // The period changed meanwhile: for ever stops the pass, a longer one moves the cutoff back.
        const { events_days } = await store.retention.get(customerId);
        if (events_days === null) break;
        cutoff = Math.min(cutoff, retentionCutoff(started, events_days));
      }
    }
    const deletion: RetentionDeletion = { started, finished: clock(), cutoff, deleted, batches, longest_batch_ms: round(longest) };
    const fields = { customer: customerId, cutoff: new Date(cutoff).toISOString(), deleted, batches, longestBatchMs: deletion.longest_batch_ms, seconds: round((performance.now() - began) / 1000) };
    if (stopped) {
      this.log?.info(fields, 'deleting old events stopped by shutdown: the next start goes on');
    } else {
      await store.retention.recordDeletion(customerId, deletion);
      if (deleted > 0) this.log?.info(fields, 'old events deleted');
      else this.log?.debug(fields, 'no events past the retention period');
    }
    return { customerId, deletion, stopped };
  }
}

/** Milliseconds (or seconds) to one decimal, as logs and the API show them. */
function round(value: number): number {
  return Math.round(value * 10) / 10;
}
