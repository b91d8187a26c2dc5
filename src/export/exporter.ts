import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { TimeRange } from '../domain/event-listing.js';
import type { ExportTaskRecord, ExportTaskStore } from '../store/export-tasks.js';
import type { Db } from '../store/open.js';
import type { ExportJob, ExportMessage } from './worker.js';

/** How long a finished export's file is kept (DESIGN.md "Events"). */
export const EXPORT_KEPT_MS = 24 * 3600 * 1000;
/** How often the sweeper looks for files past that age. */
export const SWEEP_INTERVAL_MS = 10 * 60 * 1000;
/** Exports running at once; more wait PENDING. Each holds a thread and a read connection. */
export const EXPORT_CONCURRENCY = 2;
const TEMP_SUFFIX = '.csv.partial';
/**
 * A worker's heap, kept small: an export holds one chunk at a time, and without a limit V8 lets
 * garbage grow to hundreds of MB before collecting, which counts against the server's RSS.
 */
const WORKER_LIMITS = { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 };

export interface ExporterOptions {
  db: Db;
  dataDir: string;
  tasks: ExportTaskStore;
  clock: () => number;
  concurrency?: number;
}

/** Where the exporter reports (the server's pino logger). */
export interface ExportLog {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * The worker script. Node cannot load `.ts` in a worker, so when this module runs from src/
 * (vitest) it uses the build in dist/ (`npx tsc -p .` first; `npm test` builds).
 */
function workerScript(): string {
  const beside = fileURLToPath(new URL('./worker.js', import.meta.url));
  if (existsSync(beside)) return beside;
  const built = beside.replace(/([\\/])src([\\/]export[\\/])/, '$1dist$2');
  if (existsSync(built)) return built;
  throw new Error(`export worker ${built} is missing: build with \`npx tsc -p .\``);
}

/**
 * Runs export tasks in worker threads, at most `concurrency` at once, and keeps their files
 * 24 hours. A task is PENDING from request to completion, then SUCCESSFUL with its file
 * (written under a temporary name and renamed when complete, so a half-written file is never
 * served) or FAILED.
 */
export class Exporter {
  private readonly queue: ExportTaskRecord[] = [];
  private readonly running = new Map<string, { worker: Worker; exited: Promise<void> }>();
  private readonly waiters = new Map<string, ((task: ExportTaskRecord) => void)[]>();
  private sweeper: NodeJS.Timeout | undefined;
  private closed = false;
  private log: ExportLog | undefined;

  constructor(private readonly options: ExporterOptions) {}

  /** At start-up: tasks left PENDING by a previous process fail, their partial files go, old files are swept. */
  start(log?: ExportLog): void {
    this.log = log;
    const { tasks, clock } = this.options;
    const abandoned = tasks.failAbandoned(clock());
    if (abandoned) this.log?.info({ abandoned }, 'export tasks of a previous run marked FAILED');
    mkdirSync(this.folder(), { recursive: true, mode: 0o700 });
    for (const name of readdirSync(this.folder())) {
      if (name.endsWith(TEMP_SUFFIX)) rmSync(join(this.folder(), name), { force: true });
    }
    this.sweep();
    this.sweeper = setInterval(() => {
      try {
        this.sweep();
      } catch (error) {
        // A failed sweep is retried at the next interval; it must not take the server down.
        this.log?.error({ err: error }, 'sweeping export files failed');
      }
    }, SWEEP_INTERVAL_MS).unref();
  }

  /** Accepts an export of the customer's events in the range; it runs as soon as a slot is free. */
  request(customerId: string, requestedBy: string, range: TimeRange): ExportTaskRecord {
    if (this.closed) throw new Error('the exporter is closed');
    const task = this.options.tasks.create({
      id: randomUUID(),
      customer_id: customerId,
      requested_by: requestedBy,
      start_time: range.start,
      end_time: range.end,
      requested: this.options.clock(),
    });
    this.queue.push(task);
    this.pump();
    return task;
  }

  /** Resolves with the task once it is SUCCESSFUL or FAILED. */
  finished(task: ExportTaskRecord): Promise<ExportTaskRecord> {
    const current = this.options.tasks.byId(task.customer_id, task.id);
    if (current && current.status !== 'PENDING') return Promise.resolve(current);
    return new Promise((resolve) => this.waiters.set(task.id, [...(this.waiters.get(task.id) ?? []), resolve]));
  }

  /** Deletes the files of tasks completed 24 h ago or earlier (by the injected clock); returns how many. */
  sweep(): number {
    const { tasks, clock, dataDir } = this.options;
    const expired = tasks.expiredBy(clock() - EXPORT_KEPT_MS);
    for (const { id, file } of expired) {
      rmSync(join(dataDir, file), { force: true });
      tasks.dropFile(id);
    }
    if (expired.length) this.log?.info({ deleted: expired.length }, 'expired export files deleted');
    return expired.length;
  }

  /** Stops the sweeper and the running exports; their tasks fail, queued ones too. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    for (const task of this.queue.splice(0)) this.complete(task, 'the server stopped before the export started');
    // Wait for the exit handlers, not only the threads: they record the outcome before the database closes.
    const exits = [...this.running.values()].map(({ worker, exited }) => (void worker.terminate(), exited));
    await Promise.all(exits);
  }

  private folder(): string {
    return join(this.options.dataDir, 'exports');
  }

  private pump(): void {
    while (!this.closed && this.running.size < (this.options.concurrency ?? EXPORT_CONCURRENCY) && this.queue.length) {
      this.run(this.queue.shift()!);
    }
  }

  private run(task: ExportTaskRecord): void {
    const relative = `exports/${task.id}.csv`;
    const temp = join(this.folder(), task.id + TEMP_SUFFIX);
    const job: ExportJob = {
      databaseFile: this.options.db.name,
      customerId: task.customer_id,
      start: task.start_time,
      end: task.end_time,
      file: temp,
    };
    const started = performance.now();
    const worker = new Worker(workerScript(), { workerData: job, resourceLimits: WORKER_LIMITS });
    let exited!: () => void;
    this.running.set(task.id, { worker, exited: new Promise((resolve) => (exited = resolve)) });
    let rows: number | undefined;
    let failure: string | undefined;
    worker.on('message', (message: ExportMessage) => {
      if (message.type === 'done') rows = message.rows;
    });
    worker.on('error', (error) => (failure = error.message));
    worker.on('exit', (code) => {
      this.running.delete(task.id);
      if (rows !== undefined && !failure) {
        try {
          renameSync(temp, join(this.options.dataDir, relative));
          this.log?.info({ task: task.id, rows, ms: Math.round(performance.now() - started) }, 'export written');
          this.complete(task, undefined, rows, relative);
        } catch (error) {
          this.complete(task, `the export file could not be kept: ${(error as Error).message}`);
        }
      } else {
        rmSync(temp, { force: true });
        const reason = failure ?? (this.closed ? 'the server stopped before the export finished' : `the export worker exited with code ${code}`);
        this.log?.error({ task: task.id, reason }, 'export failed');
        this.complete(task, reason);
      }
      exited();
      this.pump();
    });
  }

  private complete(task: ExportTaskRecord, failure: string | undefined, rows = 0, file = ''): void {
    const { tasks, clock } = this.options;
    if (failure === undefined) tasks.succeed(task.id, clock(), rows, file);
    else tasks.fail(task.id, clock(), failure);
    const done = tasks.byId(task.customer_id, task.id)!;
    for (const resolve of this.waiters.get(task.id) ?? []) resolve(done);
    this.waiters.delete(task.id);
  }
}
