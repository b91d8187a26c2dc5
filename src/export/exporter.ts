import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { AuditEntry } from '../domain/audit.js';
import type { CellMode } from '../domain/csv.js';
import type { TimeRange } from '../domain/event-listing.js';
import type { ClaimedExportTask, ExportTaskRecord, Store } from '../store/ports/index.js';
import { EXPORT_PARTS } from './parts.js';
import { deleteTempFiles, ExportRun, type ExportLog } from './run.js';


/** The customer has as many exports in flight as it may (docs/security.md "Limits on what one caller may hold"): nothing was stored. */
export class TooManyExports extends Error {
  constructor(
    readonly customerId: string,
    readonly limit: number,
  ) {
    super(`customer ${customerId} has ${limit} exports in flight`);
    this.name = 'TooManyExports';
  }
}

export type { ExportLog } from './run.js';

/** How long after its completion a task hands out download links for its file (docs/events.md "Exports"). */
export const EXPORT_KEPT_MS = 24 * 3600 * 1000;
/** How long a download link of an export is valid (a new one on every call). */
export const EXPORT_LINK_MS = 5 * 60 * 1000;
/**
 * When a completed task and its file are deleted: once its last link has expired
 * (docs/retention.md "Export files and tasks"), EXPORT_LINK_MS after the last link was handed out.
 */
export const EXPORT_REMOVED_MS = EXPORT_KEPT_MS + EXPORT_LINK_MS;
/** How often the sweeper looks for files past that age. */
export const SWEEP_INTERVAL_MS = 10 * 60 * 1000;
/** Exports running at once on one instance; more wait PENDING. */
export const EXPORT_CONCURRENCY = 2;
/** How long a claimed task stays its instance's without a renewal (docs/postgresql.md "Background work on several instances"). */
export const EXPORT_LEASE_MS = 30_000;
/** How often a running export renews its lease: two renewals may fail before it is lost. */
export const EXPORT_RENEW_MS = 10_000;
/**
 * How often an exporter looks for tasks nobody runs (requested on another instance, released, or
 * left by a dead one) and for the outcome of tasks it waits for but another instance runs.
 */
export const EXPORT_POLL_MS = 2_000;
/** Claims after which a task fails instead of running again: its server died each time. */
export const EXPORT_MAX_ATTEMPTS = 3;

export interface ExporterOptions {
  /** Tasks are claimed from its exportTasks; workers open their own connection to its locator. */
  store: Pick<Store, 'exportTasks' | 'locks' | 'locator'>;
  dataDir: string;
  /** The deployment's time: `requested` and `completed` of tasks, and the files' age. */
  clock: () => number;
  /** Exports run at once (default EXPORT_CONCURRENCY); 0 claims nothing, only waits. */
  concurrency?: number;
  /** Parts per export (default EXPORT_PARTS). */
  parts?: number;
  /** Lease timing in wall-clock milliseconds (tests shorten them): EXPORT_LEASE_MS, EXPORT_RENEW_MS, EXPORT_POLL_MS. */
  leaseMs?: number;
  renewMs?: number;
  pollMs?: number;
}

interface Waiter {
  customerId: string;
  resolve: (task: ExportTaskRecord) => void;
  reject: (error: Error) => void;
}

/**
 * Runs export tasks in worker threads, at most `concurrency` at once per instance (docs/events.md
 * "Exports"). Every instance claims tasks with a lease, whichever received the request, so a task
 * whose instance died is taken over when its lease ends.
 */
export class Exporter {
  /** This process's name in leases. */
  readonly instanceId = randomUUID();
  /** The runs of this instance, and their ends (outcome recorded, waiters told). */
  private readonly running = new Map<string, { run: ExportRun; done: Promise<void> }>();
  private readonly waiters = new Map<string, Waiter[]>();
  private sweeper: NodeJS.Timeout | undefined;
  private poller: NodeJS.Timeout | undefined;
  private pumping: Promise<void> | undefined;
  private pumpAgain = false;
  private claimsFailing = false;
  private closed = false;
  private log: ExportLog | undefined;

  constructor(private readonly options: ExporterOptions) {}

  private get leaseMs(): number {
    return this.options.leaseMs ?? EXPORT_LEASE_MS;
  }

  /**
   * At start-up: leases no live process can hold are freed (SQLite: the tasks a previous process
   * left PENDING run again), old files are swept, and tasks are claimed.
   */
  async start(log?: ExportLog): Promise<void> {
    this.log = log;
    const resumed = await this.options.store.exportTasks.releaseOrphaned();
    if (resumed) this.log?.info({ resumed }, 'export tasks of a previous run will run again');
    mkdirSync(this.folder(), { recursive: true, mode: 0o700 });
    await this.sweep();
    this.sweeper = setInterval(() => {
      this.sweep().catch((error: unknown) => {
        // A failed sweep is retried at the next interval; it must not take the server down.
        this.log?.error({ err: error }, 'sweeping export files failed');
      });
    }, SWEEP_INTERVAL_MS).unref();
    this.startPolling();
    this.wake();
  }

  /**
   * Accepts an export of the customer's events in the range, its text cells safe from spreadsheet
   * formulas unless `cells` is `raw`; it runs as soon as a slot is free on any instance.
   */
  async request(
    customerId: string,
    requestedBy: string,
    range: TimeRange,
    cells: CellMode = 'safe',
    options: {
      /** The audit entry of the task, given its id (written with the task). */
      auditOf?: (taskId: string) => AuditEntry;
      /** Refuse (TooManyExports) when the customer has this many tasks PENDING already. */
      maxInFlight?: number;
    } = {},
  ): Promise<ExportTaskRecord> {
    if (this.closed) throw new Error('the exporter is closed');
    const id = randomUUID();
    const task = await this.options.store.exportTasks.create(
      {
        id,
        customer_id: customerId,
        requested_by: requestedBy,
        start_time: range.start,
        end_time: range.end,
        cells,
        requested: this.options.clock(),
      },
      options.auditOf?.(id),
      options.maxInFlight,
    );
    if (!task) throw new TooManyExports(customerId, options.maxInFlight!);
    this.startPolling();
    this.wake();
    return task;
  }

  /**
   * Resolves with the task once it is SUCCESSFUL or FAILED, whichever instance ran it; rejects
   * when this exporter closes first.
   */
  async finished(task: ExportTaskRecord): Promise<ExportTaskRecord> {
    // Waiting before looking: a task that completes meanwhile resolves this waiter.
    let waiter!: Waiter;
    const completed = new Promise<ExportTaskRecord>((resolve, reject) => (waiter = { customerId: task.customer_id, resolve, reject }));
    this.waiters.set(task.id, [...(this.waiters.get(task.id) ?? []), waiter]);
    // Closing may reject it while the lookup below runs, before it is returned to a caller.
    completed.catch(() => undefined);
    const current = await this.options.store.exportTasks.byId(task.customer_id, task.id);
    if (!current || current.status === 'PENDING') {
      this.startPolling();
      return completed;
    }
    const others = (this.waiters.get(task.id) ?? []).filter((other) => other !== waiter);
    if (others.length) this.waiters.set(task.id, others);
    else this.waiters.delete(task.id);
    return current;
  }

  /**
   * Deletes the tasks completed EXPORT_REMOVED_MS ago or earlier (by the injected clock), their
   * file first: by then every link to it has expired. Returns how many. On one instance at a time:
   * 0 when another is sweeping.
   */
  async sweep(): Promise<number> {
    const outcome = await this.options.store.locks.tryRun('export-sweep', () => this.deleteExpired());
    return outcome.ran ? outcome.value : 0;
  }

  /**
   * Stops claiming, and stops the running exports: their leases are released, so another
   * instance (or this deployment's next start) runs them from the beginning at once.
   */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    clearInterval(this.poller);
    await this.pumping;
    const running = [...this.running.values()];
    for (const { run } of running) run.stop();
    // Wait for the outcomes, not only the threads: they are recorded before the database closes.
    await Promise.all(running.map(({ done }) => done));
    for (const [id, waiting] of this.waiters) {
      for (const { reject } of waiting) reject(new Error(`the server stopped before export task ${id} finished; the task stays PENDING and runs elsewhere or after a restart`));
    }
    this.waiters.clear();
  }

  private folder(): string {
    return join(this.options.dataDir, 'exports');
  }

  private async deleteExpired(): Promise<number> {
    const { store, clock, dataDir } = this.options;
    const expired = await store.exportTasks.expiredBy(clock() - EXPORT_REMOVED_MS);
    for (const { id, file } of expired) {
      // The file first: a task deleted while its file stayed would leave the file to nobody.
      if (file) rmSync(join(dataDir, file), { force: true });
      await store.exportTasks.delete(id);
    }
    if (expired.length) this.log?.info({ deleted: expired.length }, 'expired export tasks and their files deleted');
    return expired.length;
  }

  private startPolling(): void {
    if (this.poller || this.closed) return;
    this.poller = setInterval(() => {
      this.wake();
      for (const id of this.waiters.keys()) {
        if (!this.running.has(id)) this.settle(id).catch((error: unknown) => this.log?.error({ task: id, err: error }, 'looking up an export task failed'));
      }
    }, this.options.pollMs ?? EXPORT_POLL_MS).unref();
  }

  /** Claims tasks while a slot is free; one pump at a time, and a wake meanwhile pumps again after it. */
  private wake(): void {
    if (this.closed) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = this.pump()
      .then(
        () => {
          if (this.claimsFailing) this.log?.info({}, 'claiming export tasks works again');
          this.claimsFailing = false;
        },
        (error: unknown) => {
          // Said once, not every poll, while the database is unreachable.
          if (!this.claimsFailing) this.log?.error({ err: error }, 'claiming export tasks failed');
          this.claimsFailing = true;
        },
      )
      .finally(() => {
        this.pumping = undefined;
        if (this.pumpAgain) {
          this.pumpAgain = false;
          this.wake();
        }
      });
  }

  private async pump(): Promise<void> {
    const { exportTasks } = this.options.store;
    while (!this.closed && this.running.size < (this.options.concurrency ?? EXPORT_CONCURRENCY)) {
      const task = await exportTasks.claim(this.instanceId, Date.now(), this.leaseMs);
      if (!task) return;
      if (this.closed) {
        await exportTasks.release(task.id, this.instanceId);
        return;
      }
      // Our own task, its lease ended before a renewal came: the claim renewed it.
      if (this.running.has(task.id)) continue;
      deleteTempFiles(this.options.dataDir, task.id);
      if (task.attempts > EXPORT_MAX_ATTEMPTS) await this.giveUp(task);
      else this.run(task);
    }
  }

  private async giveUp(task: ClaimedExportTask): Promise<void> {
    const failure = `the export was started ${task.attempts - 1} times and its server stopped each time before it finished`;
    this.log?.error({ task: task.id, attempts: task.attempts - 1 }, 'export given up');
    await this.options.store.exportTasks.fail(task.id, this.instanceId, this.options.clock(), failure);
    await this.settle(task.id);
  }

  private run(task: ClaimedExportTask): void {
    const { store, dataDir, clock, parts, renewMs } = this.options;
    const run = new ExportRun(task, {
      store,
      owner: this.instanceId,
      dataDir,
      clock,
      leaseMs: this.leaseMs,
      renewMs: renewMs ?? EXPORT_RENEW_MS,
      parts: parts ?? EXPORT_PARTS,
      log: this.log,
    });
    const done = run.finished
      .then(() => this.settle(task.id))
      .catch((error: unknown) => this.log?.error({ task: task.id, err: error }, 'looking up an export task failed'))
      .finally(() => {
        this.running.delete(task.id);
        this.wake();
      });
    this.running.set(task.id, { run, done });
  }

  /** Resolves the task's waiters once the store says it is completed. */
  private async settle(id: string): Promise<void> {
    const waiting = this.waiters.get(id);
    if (!waiting?.length) return;
    const task = await this.options.store.exportTasks.byId(waiting[0]!.customerId, id);
    if (!task || task.status === 'PENDING') return;
    for (const { resolve } of this.waiters.get(id) ?? []) resolve(task);
    this.waiters.delete(id);
  }
}
