import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { workerScript } from '../../threads/worker-script.js';
import type { AnalysisAnswer, AnalysisTask } from './job-analysis-worker.js';
import type { AnalysisRequest } from '../ports/index.js';
import { analyzeStoredJobsToJson } from './job-events.js';
import type { Db } from './open.js';

interface Pending {
  task: AnalysisTask;
  resolve: (json: Buffer) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  busy: Pending | undefined;
}

/**
 * A small pool (one worker per spare core, at most two) of long-lived worker threads that run
 * job analyses on their own read-only connections. Workers start on first use and are reused;
 * tasks beyond the pool's size queue. An in-memory database cannot be shared with a thread, so
 * it is analysed inline.
 */
export class JobAnalysisPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextTaskId = 1;
  private closed = false;

  constructor(
    private readonly db: Db,
    // One core stays for HTTP and ingest: on two cores analyses run one at a time.
    private readonly size = Math.max(1, Math.min(2, availableParallelism() - 1)),
  ) {}

  /** The analysis of the request as the JSON body `{"results":[...]}`, computed off the main thread. */
  analyze(request: AnalysisRequest): Promise<Buffer> {
    if (this.closed) return Promise.reject(new Error('the job analysis pool is closed'));
    if (this.db.memory) return Promise.resolve(analyzeStoredJobsToJson(this.db, request));
    return new Promise((resolve, reject) => {
      this.queue.push({ task: { taskId: this.nextTaskId++, request }, resolve, reject });
      this.dispatch();
    });
  }

  /** Stops the workers; queued and running analyses fail. */
  async close(): Promise<void> {
    this.closed = true;
    const error = new Error('the server is shutting down');
    for (const pending of this.queue.splice(0)) pending.reject(error);
    await Promise.all(
      this.slots.splice(0).map((slot) => {
        slot.busy?.reject(error);
        return slot.worker.terminate();
      }),
    );
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => !s.busy);
      if (!slot && this.slots.length < this.size) {
        try {
          slot = this.spawn();
        } catch (error) {
          // No worker can start (e.g. not built): fail what waits rather than keep it forever.
          for (const pending of this.queue.splice(0)) pending.reject(error as Error);
          return;
        }
      }
      if (!slot) return;
      const pending = this.queue.shift()!;
      slot.busy = pending;
      slot.worker.ref();
      slot.worker.postMessage(pending.task);
    }
  }

  private spawn(): Slot {
    const worker = new Worker(workerScript(import.meta.url, './job-analysis-worker.js'), { workerData: { file: this.db.name } });
    const slot: Slot = { worker, busy: undefined };
    worker.unref();
    worker.on('message', (answer: AnalysisAnswer) => {
      const pending = slot.busy;
      slot.busy = undefined;
      worker.unref();
      if (pending && pending.task.taskId === answer.taskId) {
        if ('error' in answer) pending.reject(new Error(`job analysis failed: ${answer.error}`));
        else pending.resolve(Buffer.from(answer.json.buffer, answer.json.byteOffset, answer.json.byteLength));
      }
      this.dispatch();
    });
    const retire = (cause: Error) => {
      const index = this.slots.indexOf(slot);
      if (index === -1) return;
      this.slots.splice(index, 1);
      slot.busy?.reject(new Error(`job analysis worker stopped: ${cause.message}`, { cause }));
      slot.busy = undefined;
      if (!this.closed) this.dispatch();
    };
    worker.on('error', retire);
    worker.on('exit', (code) => retire(new Error(`exit code ${code}`)));
    this.slots.push(slot);
    return slot;
  }
}
