import { mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ClaimedExportTask, Store } from '../store/ports/index.js';
import { writeParts, type PartsWriting } from './parts.js';

const TEMP_SUFFIX = '.csv.partial';
const LOST = "export lease lost: its outcome is another instance's";

/** Where the exporter reports (the server's pino logger). */
export interface ExportLog {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** What a run needs of its exporter. */
export interface RunContext {
  store: Pick<Store, 'exportTasks' | 'locator'>;
  /** The instance's name in leases. */
  owner: string;
  /** The blob directory; files go to its `exports/`. */
  dataDir: string;
  clock: () => number;
  leaseMs: number;
  renewMs: number;
  parts: number;
  log: ExportLog | undefined;
}

/** Deletes the temporary files of the task's earlier attempts (of a process that died, or lost the lease). */
export function deleteTempFiles(dataDir: string, taskId: string): void {
  const folder = join(dataDir, 'exports');
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  for (const name of readdirSync(folder)) {
    if (name.startsWith(`${taskId}.`) && name.endsWith(TEMP_SUFFIX)) rmSync(join(folder, name), { force: true });
  }
}

/** Thrown when the lease is found lost just before the file would take the task's name. */
class LeaseLost extends Error {}

/**
 * One attempt at a claimed task: writes its file under names of this attempt (`<task>.a<n>...`),
 * renews the lease meanwhile, renews once more just before the file takes the task's name, and
 * records the outcome only while the lease is still its own. A lost lease stops the workers and
 * records nothing; a stop (the server closes) releases the lease for another instance.
 */
export class ExportRun {
  /** Resolves once the outcome is recorded (or left to another instance); never rejects. */
  readonly finished: Promise<void>;
  private readonly files: string[];
  private readonly writing: PartsWriting;
  private lost = false;
  private stopped = false;

  constructor(
    private readonly task: ClaimedExportTask,
    private readonly context: RunContext,
  ) {
    const started = performance.now();
    const attempt = join(context.dataDir, 'exports', `${task.id}.a${task.attempts}`);
    this.files = Array.from({ length: context.parts }, (_, part) => `${attempt}${part === 0 ? '' : `.${part}`}${TEMP_SUFFIX}`);
    const relative = `exports/${task.id}.csv`;
    const { locator } = context.store;
    this.writing = writeParts({ locator, customerId: task.customer_id, range: { start: task.start_time, end: task.end_time }, cells: task.cells, files: this.files });
    const renewal = setInterval(() => {
      this.renew().catch((error: unknown) => context.log?.error({ task: task.id, err: error }, 'renewing an export lease failed'));
    }, context.renewMs).unref();
    this.finished = this.writing.written
      .then(async (rows) => {
        if (!(await this.renew())) throw new LeaseLost();
        renameSync(this.files[0]!, join(context.dataDir, relative));
        return rows;
      })
      .then(
        (rows) => this.succeeded(rows, relative, Math.round(performance.now() - started)),
        (error: Error) => this.failed(error),
      )
      .catch((error: Error) => {
        // The outcome could not be recorded (the database refused): the task stays PENDING, its
        // lease ends and it runs again; its file must not outlive it unrecorded.
        for (const file of [...this.files, join(context.dataDir, relative)]) rmSync(file, { force: true });
        context.log?.error({ task: task.id, err: error }, 'export outcome could not be recorded');
      })
      .finally(() => clearInterval(renewal));
  }

  /** Stops the workers: the lease is released without an outcome, for another instance to run the task from the beginning. */
  stop(): void {
    this.stopped = true;
    this.writing.stop();
  }

  /** Extends the lease; when it was lost, stops the workers and says false. */
  private async renew(): Promise<boolean> {
    if (this.lost) return false;
    const { store, owner, leaseMs } = this.context;
    const held = await store.exportTasks.renew(this.task.id, owner, Date.now() + leaseMs);
    if (!held && !this.lost) {
      this.lost = true;
      this.writing.stop();
    }
    return held;
  }

  private async succeeded(rows: number, relative: string, ms: number): Promise<void> {
    const { store, owner, clock, dataDir, log } = this.context;
    const { task } = this;
    if (await store.exportTasks.succeed(task.id, owner, clock(), rows, relative)) {
      log?.info({ task: task.id, rows, parts: this.files.length, ms }, 'export written');
      return;
    }
    // Lost after the rename: the file stays only if the task's winner recorded it (the same export, complete).
    if ((await store.exportTasks.byId(task.customer_id, task.id))?.file !== relative) rmSync(join(dataDir, relative), { force: true });
    log?.info({ task: task.id }, LOST);
  }

  private async failed(error: Error): Promise<void> {
    const { store, owner, clock, log } = this.context;
    const { task } = this;
    for (const file of this.files) rmSync(file, { force: true });
    if (this.lost || error instanceof LeaseLost) {
      log?.info({ task: task.id }, LOST);
    } else if (this.stopped) {
      await store.exportTasks.release(task.id, owner);
      log?.info({ task: task.id }, 'export stopped with the server: its task is free for another instance');
    } else {
      log?.error({ task: task.id, reason: error.message }, 'export failed');
      if (!(await store.exportTasks.fail(task.id, owner, clock(), error.message))) log?.info({ task: task.id }, LOST);
    }
  }
}
