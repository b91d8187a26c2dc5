import { parentPort, Worker, type TransferListItem } from 'node:worker_threads';
import { workerScript } from './worker-script.js';

/** What a pool sends its thread: a task and its number. */
export interface TaskMessage<T> {
  taskId: number;
  task: T;
}

/** What the thread answers: the task's result, or why it failed. */
export type TaskAnswer<R> = { taskId: number; result: R } | { taskId: number; error: string };

export interface TaskPoolOptions {
  /** The thread's script as workerScript finds it (`relative` to the module `from`); it answers each TaskMessage with answerTasks. */
  script: { from: string; relative: string };
  workerData: unknown;
  /** Threads at most; tasks beyond them wait in order. */
  size: number;
  /** A thread left without work stops after this long, and the next task starts a new one; without it, threads stay. */
  idleMs?: number;
  /** Errors say what failed: `${failed}: ${error}` for a task the thread refused. */
  failed: string;
  /** `${stopped}: ${cause}` for the task of a thread that died. */
  stopped: string;
  /** The error of a task asked for once the pool is closed. */
  closed: string;
}

interface Pending<T, R> {
  message: TaskMessage<T>;
  resolve: (result: R) => void;
  reject: (error: Error) => void;
}

interface Slot<T, R> {
  worker: Worker;
  busy: Pending<T, R> | undefined;
  idle: NodeJS.Timeout | undefined;
}

/**
 * Worker threads that each run one task at a time, for synchronous work that would stall the
 * event loop that serves HTTP, TLS and MQTT (better-sqlite3 reads and writes). Threads start with
 * the first task that finds none free and are reused; a thread that dies fails the task it had
 * and the next task starts another. A thread without work does not keep the process alive.
 */
export class TaskPool<T, R> {
  private readonly slots: Slot<T, R>[] = [];
  private readonly queue: Pending<T, R>[] = [];
  private nextTaskId = 1;
  private isClosed = false;

  constructor(private readonly options: TaskPoolOptions) {}

  /** Whether close() was called. */
  get closed(): boolean {
    return this.isClosed;
  }

  /** Whether a thread is running (started, and neither retired nor dead). */
  get running(): boolean {
    return this.slots.length > 0;
  }

  /** The task's result, computed in a thread, in the order tasks were given. */
  run(task: T): Promise<R> {
    if (this.isClosed) return Promise.reject(new Error(this.options.closed));
    return new Promise((resolve, reject) => {
      this.queue.push({ message: { taskId: this.nextTaskId++, task }, resolve, reject });
      this.dispatch();
    });
  }

  /** Stops the threads; waiting and running tasks fail with `reason` (a task in flight finishes or not, whole). */
  async close(reason = this.options.closed): Promise<void> {
    this.isClosed = true;
    const error = new Error(reason);
    for (const pending of this.queue.splice(0)) pending.reject(error);
    await Promise.all(
      this.slots.splice(0).map((slot) => {
        clearTimeout(slot.idle);
        slot.busy?.reject(error);
        slot.busy = undefined;
        return slot.worker.terminate();
      }),
    );
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => !s.busy);
      if (!slot && this.slots.length < this.options.size) {
        try {
          slot = this.spawn();
        } catch (error) {
          // No thread can start (e.g. not built): fail what waits rather than keep it forever.
          for (const pending of this.queue.splice(0)) pending.reject(error as Error);
          return;
        }
      }
      if (!slot) return;
      clearTimeout(slot.idle);
      slot.busy = this.queue.shift()!;
      slot.worker.ref();
      slot.worker.postMessage(slot.busy.message);
    }
  }

  private spawn(): Slot<T, R> {
    const { from, relative } = this.options.script;
    const worker = new Worker(workerScript(from, relative), { workerData: this.options.workerData });
    const slot: Slot<T, R> = { worker, busy: undefined, idle: undefined };
    worker.unref();
    worker.on('message', (answer: TaskAnswer<R>) => {
      const pending = slot.busy;
      slot.busy = undefined;
      worker.unref();
      if (pending?.message.taskId === answer.taskId) {
        if ('error' in answer) pending.reject(new Error(`${this.options.failed}: ${answer.error}`));
        else pending.resolve(answer.result);
      }
      this.dispatch();
      if (!slot.busy && this.options.idleMs !== undefined) slot.idle = setTimeout(() => this.retire(slot), this.options.idleMs).unref();
    });
    const died = (cause: Error) => {
      if (!this.remove(slot)) return;
      clearTimeout(slot.idle);
      slot.busy?.reject(new Error(`${this.options.stopped}: ${cause.message}`, { cause }));
      slot.busy = undefined;
      if (!this.isClosed) this.dispatch();
    };
    worker.on('error', died);
    worker.on('exit', (code) => died(new Error(`exit code ${code}`)));
    this.slots.push(slot);
    return slot;
  }

  private retire(slot: Slot<T, R>): void {
    if (slot.busy || !this.remove(slot)) return;
    void slot.worker.terminate();
  }

  /** Takes the slot out of the pool; false when it was out already (retired, or the pool closed). */
  private remove(slot: Slot<T, R>): boolean {
    const index = this.slots.indexOf(slot);
    if (index === -1) return false;
    this.slots.splice(index, 1);
    return true;
  }
}

/**
 * The body of a pool's thread: answers each task with what `run` returns, or with the message of
 * what it throws; `transfer` names memory of the result to move rather than copy.
 */
export function answerTasks<T, R>(run: (task: T) => R, transfer?: (result: R) => TransferListItem[]): void {
  parentPort!.on('message', ({ taskId, task }: TaskMessage<T>) => {
    let answer: TaskAnswer<R>;
    let moved: TransferListItem[] = [];
    try {
      const result = run(task);
      answer = { taskId, result };
      moved = transfer?.(result) ?? [];
    } catch (error) {
      answer = { taskId, error: error instanceof Error ? error.message : String(error) };
    }
    parentPort!.postMessage(answer, moved);
  });
}
