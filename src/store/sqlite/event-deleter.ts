import { Worker } from 'node:worker_threads';
import { workerScript } from '../../threads/worker-script.js';
import type { CreatedIdKey } from '../../domain/page-token.js';
import type { DeletedBatch } from '../ports/index.js';
import { batchDeleter } from './event-deletion.js';
import type { DeletionAnswer, DeletionTask } from './event-deletion-worker.js';
import type { Db } from './open.js';

/** A thread left without work stops after this long; the next batch starts a new one. */
const IDLE_MS = 30_000;

interface Pending {
  task: DeletionTask;
  resolve: (batch: DeletedBatch) => void;
  reject: (error: Error) => void;
}

/**
 * Runs batches of event deletion in a worker thread with its own connection (docs/retention.md):
 * better-sqlite3 is synchronous, and a batch may wait for the write lock while the ingest writer
 * commits, so on the server's thread it would stall HTTP, TLS and MQTT. The thread starts with the
 * first batch that has something to delete and stops when idle; batches run one at a time, in
 * order. An in-memory database cannot be shared with a thread: its batches run inline.
 */
export class EventDeleter {
  private worker: Worker | undefined;
  private readonly queue: Pending[] = [];
  private busy: Pending | undefined;
  private idle: NodeJS.Timeout | undefined;
  private nextTaskId = 1;
  private closed = false;
  private readonly oldestBefore;

  constructor(private readonly db: Db) {
    this.oldestBefore = db.prepare<[string, number], 1>('SELECT 1 FROM events WHERE customer_id = ? AND created < ? LIMIT 1').pluck();
  }

  /** Deletes up to `limit` of the customer's events with created < cutoff after `after`, oldest first, in one transaction. */
  delete(customerId: string, cutoff: number, limit: number, after?: CreatedIdKey): Promise<DeletedBatch> {
    if (this.closed) return Promise.reject(new Error('the event deleter is closed'));
    // One index probe on this connection: a pass with nothing to delete starts no thread.
    if (!this.worker && this.oldestBefore.get(customerId, cutoff) === undefined) return Promise.resolve({ deleted: 0, holdMs: 0 });
    if (this.db.memory) return Promise.resolve(batchDeleter(this.db)(customerId, cutoff, limit, after));
    return new Promise((resolve, reject) => {
      this.queue.push({ task: { taskId: this.nextTaskId++, customerId, cutoff, limit, ...(after ? { after } : {}) }, resolve, reject });
      this.dispatch();
    });
  }

  /** Stops the thread; a batch in flight is rolled back or committed whole (one transaction), and its caller told it stopped. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idle);
    const error = new Error('the event deleter is closed');
    for (const pending of this.queue.splice(0)) pending.reject(error);
    this.busy?.reject(error);
    this.busy = undefined;
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private dispatch(): void {
    if (this.busy || this.queue.length === 0) return;
    clearTimeout(this.idle);
    let worker: Worker;
    try {
      worker = this.worker ??= this.spawn();
    } catch (error) {
      // No thread can start (e.g. not built): fail what waits rather than keep it forever.
      for (const pending of this.queue.splice(0)) pending.reject(error as Error);
      return;
    }
    this.busy = this.queue.shift()!;
    worker.ref();
    worker.postMessage(this.busy.task);
  }

  private spawn(): Worker {
    const worker = new Worker(workerScript(import.meta.url, './event-deletion-worker.js'), { workerData: { file: this.db.name } });
    worker.on('message', (answer: DeletionAnswer) => {
      const pending = this.busy;
      this.busy = undefined;
      worker.unref();
      if (pending?.task.taskId === answer.taskId) {
        if ('error' in answer) pending.reject(new Error(`deleting old events failed: ${answer.error}`));
        else {
          const { taskId: _taskId, ...batch } = answer;
          pending.resolve(batch);
        }
      }
      if (this.queue.length > 0) return this.dispatch();
      this.idle = setTimeout(() => this.retire(worker), IDLE_MS).unref();
    });
    const died = (cause: Error) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      const pending = this.busy;
      this.busy = undefined;
      pending?.reject(new Error(`the event deletion thread stopped: ${cause.message}`, { cause }));
      if (!this.closed) this.dispatch();
    };
    worker.on('error', died);
    worker.on('exit', (code) => died(new Error(`exit code ${code}`)));
    worker.unref();
    return worker;
  }

  private retire(worker: Worker): void {
    if (this.worker !== worker || this.busy) return;
    this.worker = undefined;
    void worker.terminate();
  }
}
