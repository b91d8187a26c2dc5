import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Worker } from 'node:worker_threads';
import type { CellMode } from '../domain/csv.js';
import type { TimeRange } from '../domain/event-listing.js';
import type { ExportTaskRecord, Store } from '../store/ports.js';
import { workerScript } from '../threads/worker-script.js';
import type { ExportJob, ExportMessage } from './worker.js';

/** How long a finished export's file is kept (DESIGN.md "Events"). */
export const EXPORT_KEPT_MS = 24 * 3600 * 1000;
/** How often the sweeper looks for files past that age. */
export const SWEEP_INTERVAL_MS = 10 * 60 * 1000;
/** Exports running at once; more wait PENDING. */
export const EXPORT_CONCURRENCY = 2;
/**
 * Parts an export is split into, each written by its own worker thread (with its own read
 * connection) on its own core: one thread writes about 240,000 rows/s, most of it spent handing
 * SQLite's values to V8 one at a time (docs/events.md).
 */
export const EXPORT_PARTS = Math.min(2, availableParallelism());
const TEMP_SUFFIX = '.csv.partial';
/**
 * A worker's heap, kept small: an export holds one chunk at a time, and without a limit V8 lets
 * garbage grow to hundreds of MB before collecting, which counts against the server's RSS.
 */
const WORKER_LIMITS = { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 };

export interface ExporterOptions {
  /** Tasks are kept in its exportTasks; workers open their own connection to its locator. */
  store: Pick<Store, 'exportTasks' | 'locator'>;
  dataDir: string;
  clock: () => number;
  concurrency?: number;
  /** Parts per export (default EXPORT_PARTS). */
  parts?: number;
}

/** Where the exporter reports (the server's pino logger). */
export interface ExportLog {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * Runs export tasks in worker threads, at most `concurrency` at once, and keeps their files
 * 24 hours. A task is PENDING from request to completion, then SUCCESSFUL with its file
 * (written under a temporary name and renamed when complete, so a half-written file is never
 * served) or FAILED.
 */
export class Exporter {
  private readonly queue: ExportTaskRecord[] = [];
  private readonly running = new Map<string, { workers: Worker[]; finished: Promise<void> }>();
  private readonly waiters = new Map<string, ((task: ExportTaskRecord) => void)[]>();
  private sweeper: NodeJS.Timeout | undefined;
  private closed = false;
  private log: ExportLog | undefined;

  constructor(private readonly options: ExporterOptions) {}

  /** At start-up: tasks left PENDING by a previous process fail, their partial files go, old files are swept. */
  async start(log?: ExportLog): Promise<void> {
    this.log = log;
    const { store, clock } = this.options;
    const abandoned = await store.exportTasks.failAbandoned(clock());
    if (abandoned) this.log?.info({ abandoned }, 'export tasks of a previous run marked FAILED');
    mkdirSync(this.folder(), { recursive: true, mode: 0o700 });
    for (const name of readdirSync(this.folder())) {
      if (name.endsWith(TEMP_SUFFIX)) rmSync(join(this.folder(), name), { force: true });
    }
    await this.sweep();
    this.sweeper = setInterval(() => {
      this.sweep().catch((error: unknown) => {
        // A failed sweep is retried at the next interval; it must not take the server down.
        this.log?.error({ err: error }, 'sweeping export files failed');
      });
    }, SWEEP_INTERVAL_MS).unref();
  }

  /**
   * Accepts an export of the customer's events in the range, its text cells safe from spreadsheet
   * formulas unless `cells` is `raw`; it runs as soon as a slot is free.
   */
  async request(customerId: string, requestedBy: string, range: TimeRange, cells: CellMode = 'safe'): Promise<ExportTaskRecord> {
    if (this.closed) throw new Error('the exporter is closed');
    const task = await this.options.store.exportTasks.create({
      id: randomUUID(),
      customer_id: customerId,
      requested_by: requestedBy,
      start_time: range.start,
      end_time: range.end,
      cells,
      requested: this.options.clock(),
    });
    this.queue.push(task);
    this.pump();
    return task;
  }

  /** Resolves with the task once it is SUCCESSFUL or FAILED. */
  async finished(task: ExportTaskRecord): Promise<ExportTaskRecord> {
    // Waiting before looking: a task that completes meanwhile resolves this waiter.
    let waiter!: (task: ExportTaskRecord) => void;
    const completed = new Promise<ExportTaskRecord>((resolve) => (waiter = resolve));
    this.waiters.set(task.id, [...(this.waiters.get(task.id) ?? []), waiter]);
    const current = await this.options.store.exportTasks.byId(task.customer_id, task.id);
    if (!current || current.status === 'PENDING') return completed;
    const others = (this.waiters.get(task.id) ?? []).filter((resolve) => resolve !== waiter);
    if (others.length) this.waiters.set(task.id, others);
    else this.waiters.delete(task.id);
    return current;
  }

  /** Deletes the files of tasks completed 24 h ago or earlier (by the injected clock); returns how many. */
  async sweep(): Promise<number> {
    const { store, clock, dataDir } = this.options;
    const expired = await store.exportTasks.expiredBy(clock() - EXPORT_KEPT_MS);
    for (const { id, file } of expired) {
      rmSync(join(dataDir, file), { force: true });
      await store.exportTasks.dropFile(id);
    }
    if (expired.length) this.log?.info({ deleted: expired.length }, 'expired export files deleted');
    return expired.length;
  }

  /** Stops the sweeper and the running exports; their tasks fail, queued ones too. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    for (const task of this.queue.splice(0)) await this.complete(task, 'the server stopped before the export started');
    // Wait for the outcomes, not only the threads: they are recorded before the database closes.
    const outcomes = [...this.running.values()].map(({ workers, finished }) => (workers.forEach((worker) => void worker.terminate()), finished));
    await Promise.all(outcomes);
  }

  private folder(): string {
    return join(this.options.dataDir, 'exports');
  }

  private pump(): void {
    while (!this.closed && this.running.size < (this.options.concurrency ?? EXPORT_CONCURRENCY) && this.queue.length) {
      this.run(this.queue.shift()!);
    }
  }

  /**
   * Writes the task's file: the range is cut into equal spans of time, one worker writes each
   * (the first with the header) into its own temporary file, and the later parts are appended to
   * the first in order, which is then renamed. Events are not spread evenly in time, so parts
   * may take unequal time; the file is the same either way.
   */
  private run(task: ExportTaskRecord): void {
    const started = performance.now();
    const ranges = splitRange({ start: task.start_time, end: task.end_time }, this.options.parts ?? EXPORT_PARTS);
    const files = ranges.map((_, part) => join(this.folder(), `${task.id}${part === 0 ? '' : `.${part}`}${TEMP_SUFFIX}`));
    const relative = `exports/${task.id}.csv`;
    const workers: Worker[] = [];
    const outcomes: Promise<number>[] = [];
    for (const [part, range] of ranges.entries()) {
      try {
        const job: ExportJob = {
          locator: this.options.store.locator,
          customerId: task.customer_id,
          ...range,
          file: files[part]!,
          header: part === 0,
          cells: task.cells,
        };
        const worker = new Worker(workerScript(import.meta.url, './worker.js'), { workerData: job, resourceLimits: WORKER_LIMITS });
        workers.push(worker);
        outcomes.push(this.outcomeOf(worker));
      } catch (error) {
        // No thread (out of threads or memory): the parts started are stopped below.
        outcomes.push(Promise.reject(new Error(`no export worker could be started: ${(error as Error).message}`)));
        break;
      }
    }
    const finished = Promise.all(outcomes)
      .then(async (counts) => {
        await appendFiles(files[0]!, files.slice(1));
        renameSync(files[0]!, join(this.options.dataDir, relative));
        return counts.reduce((sum, count) => sum + count, 0);
      })
      .then(
        (rows) => {
          this.log?.info({ task: task.id, rows, parts: ranges.length, ms: Math.round(performance.now() - started) }, 'export written');
          return this.complete(task, undefined, rows, relative);
        },
        async (error: Error) => {
          // One part failed: stop the others before their files go, so that none is written again.
          workers.forEach((worker) => void worker.terminate());
          await Promise.allSettled(outcomes);
          for (const file of files) rmSync(file, { force: true });
          this.log?.error({ task: task.id, reason: error.message }, 'export failed');
          return this.complete(task, error.message);
        },
      )
      .catch((error: Error) => {
        // The outcome could not be recorded (the database refused): the task stays PENDING and
        // fails at the next start; its file must not outlive it unrecorded.
        rmSync(join(this.options.dataDir, relative), { force: true });
        this.log?.error({ task: task.id, err: error }, 'export outcome could not be recorded');
      })
      .finally(() => {
        this.running.delete(task.id);
        this.pump();
      });
    this.running.set(task.id, { workers, finished });
  }

  /** The rows a worker wrote, once it has exited; rejects with the reason if it did not finish. */
  private outcomeOf(worker: Worker): Promise<number> {
    return new Promise((resolve, reject) => {
      let rows: number | undefined;
      let failure: string | undefined;
      worker.on('message', (message: ExportMessage) => {
        if (message.type === 'done') rows = message.rows;
        else failure ??= message.reason;
      });
      // Errors cross threads as plain objects: a SqliteError arrives without its message.
      worker.on('error', (error) => (failure ??= error.message || `the export worker failed (${String((error as { code?: unknown }).code ?? error)})`));
      worker.on('exit', (code) => {
        if (rows !== undefined && failure === undefined) resolve(rows);
        else reject(new Error(failure ?? (this.closed ? 'the server stopped before the export finished' : `the export worker exited with code ${code}`)));
      });
    });
  }

  private async complete(task: ExportTaskRecord, failure: string | undefined, rows = 0, file = ''): Promise<void> {
    const { store, clock } = this.options;
    if (failure === undefined) await store.exportTasks.succeed(task.id, clock(), rows, file);
    else await store.exportTasks.fail(task.id, clock(), failure);
    const done = (await store.exportTasks.byId(task.customer_id, task.id))!;
    for (const resolve of this.waiters.get(task.id) ?? []) resolve(done);
    this.waiters.delete(task.id);
  }
}

/** The range cut into `parts` consecutive half-open spans of (nearly) equal length that cover it exactly. */
export function splitRange(range: TimeRange, parts: number): TimeRange[] {
  const span = range.end - range.start;
  return Array.from({ length: parts }, (_, part) => ({
    start: range.start + Math.floor((span * part) / parts),
    end: part === parts - 1 ? range.end : range.start + Math.floor((span * (part + 1)) / parts),
  }));
}

/** Appends the files to `target` in order and deletes them. Streams: the event loop keeps serving meanwhile. */
async function appendFiles(target: string, files: string[]): Promise<void> {
  for (const file of files) {
    await pipeline(createReadStream(file, { highWaterMark: 1024 * 1024 }), createWriteStream(target, { flags: 'a' }));
    rmSync(file);
  }
}
