import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import { Worker, type TransferListItem } from 'node:worker_threads';
import type { FastifyBaseLogger } from 'fastify';

/** What a supervised thread posts once it is ready for work (its database is open). */
export const THREAD_READY = 'ready';

/**
 * Tests only: when a thread entry throws on purpose. 'now' at once; the writer also knows
 * 'before-commit' and 'after-commit' (around the next batch it receives), and `payloadContains`:
 * before committing any batch with a message (not a dead letter) whose payload holds that text,
 * in this thread and every replacement (a message that kills the writer whenever it sees it).
 */
export type TestCrash = 'now' | 'before-commit' | 'after-commit' | { payloadContains: string };

/**
 * starting: the first thread is not ready yet; running: the thread said it is ready;
 * restarting: the thread died and its replacement is not ready yet; closed: close() was
 * called, or a thread died once restarts were stopped (shutdown).
 */
export type ThreadState = 'starting' | 'running' | 'restarting' | 'closed';

/** How soon a dead thread is replaced. */
export interface RestartPolicy {
  /** Delay before replacing a thread that had lived at least `stableMs`, or died first. */
  firstDelayMs: number;
  /** The delay doubles for each thread that dies sooner than that, up to this. */
  maxDelayMs: number;
  stableMs: number;
}

/** 100 ms, doubling to 5 s: a thread that dies at every start costs one start per 5 s. */
export const RESTART_POLICY: RestartPolicy = { firstDelayMs: 100, maxDelayMs: 5000, stableMs: 30_000 };

export type ThreadLog = Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;

/** What others see of a supervised thread: its state, and when it changes. */
export interface ThreadStatus {
  readonly name: string;
  readonly state: ThreadState;
  /** Why the last thread died; set while restarting. */
  readonly cause: Error | undefined;
  /** Why the last thread died, kept after its replacement runs; undefined until one died. */
  readonly lastCause: Error | undefined;
  /** Threads started so far: 1 + restarts. */
  readonly starts: number;
  /** Resolves when the thread is next in `state` (at once if it is now). */
  reached(state: ThreadState): Promise<void>;
}

export interface SupervisedThreadOptions {
  /** Names the thread in logs and errors ("ingest writer"). */
  name: string;
  /** The compiled entry; it posts THREAD_READY when ready and exits on the message 'close'. */
  entry: URL;
  workerData: unknown;
  log: ThreadLog;
  /** Any message of the thread but THREAD_READY. */
  onMessage(message: unknown): void;
  /**
   * The thread died unexpectedly: the work it had in hand is lost. Runs after the state changed;
   * `whileRunning`: the thread had said it was ready (so its start did not kill it).
   */
  onCrash?(cause: Error, whileRunning: boolean): void;
  /** A replacement thread was started: it may be sent work (it queues messages until it is ready). */
  onRestart?(): void;
  policy?: RestartPolicy;
}

// crashThreadForTest({ holdRestart }) parks the next restart here until the test releases it.
const heldRestarts = new WeakMap<SupervisedThread, Promise<void>>();
// crashThreadForTest({ payloadContains }) is sent to every thread started after it, too.
const stickyTestCrashes = new WeakMap<SupervisedThread, TestCrash>();

/**
 * A worker thread that is replaced when it dies (an uncaught error, an exit) instead of leaving
 * its work undone until the process restarts. Replacements back off (RestartPolicy) so that a
 * thread that dies at every start does not spin the CPU. A deliberate close() never restarts.
 */
export class SupervisedThread extends EventEmitter implements ThreadStatus {
  state: ThreadState = 'starting';
  cause: Error | undefined;
  lastCause: Error | undefined;
  starts = 0;
  private worker: Worker | undefined;
  private closing = false;
  private restartsStopped = false;
  private delayMs = 0;
  private startedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly policy: RestartPolicy;

  constructor(private readonly options: SupervisedThreadOptions) {
    super();
    this.policy = options.policy ?? RESTART_POLICY;
    this.start();
  }

  get name(): string {
    return this.options.name;
  }

  /** Sends the thread a message; false (nothing sent) while no thread runs. */
  post(message: unknown, transfer: readonly TransferListItem[] = []): boolean {
    if (!this.worker) return false;
    this.worker.postMessage(message, transfer);
    return true;
  }

  reached(state: ThreadState): Promise<void> {
    if (this.state === state) return Promise.resolve();
    return new Promise((resolve) => {
      const listener = (reached: ThreadState) => {
        if (reached !== state) return;
        this.off('state', listener);
        resolve();
      };
      this.on('state', listener);
    });
  }

  /** Shutdown: a thread that dies from now on is not replaced, and a pending restart is called off. */
  stopRestarts(): void {
    this.restartsStopped = true;
    clearTimeout(this.timer);
    if (!this.worker) this.setState('closed');
  }

  /** Asks the thread to finish ('close') and waits for it to exit. */
  async close(): Promise<void> {
    this.stopRestarts();
    const worker = this.worker;
    if (worker) {
      this.closing = true;
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      worker.postMessage('close');
      await exited;
    }
    this.setState('closed');
  }

  private start(): void {
    this.starts++;
    this.startedAt = performance.now();
    const worker = new Worker(this.options.entry, { workerData: this.options.workerData });
    this.worker = worker;
    const sticky = stickyTestCrashes.get(this);
    if (sticky) worker.postMessage({ testCrash: sticky });
    let error: Error | undefined;
    worker.on('message', (message: unknown) => (message === THREAD_READY ? this.ready() : this.options.onMessage(message)));
    // An uncaught error in the thread: 'error', then 'exit' (code 1).
    worker.on('error', (thrown) => (error ??= thrown));
    worker.on('exit', (code) => this.exited(error ?? new Error(`the ${this.name} thread exited with code ${code}`)));
  }

  private ready(): void {
    if (this.closing) return;
    if (this.state === 'restarting') {
      this.options.log.info({ thread: this.name, starts: this.starts, cause: this.cause?.message }, `${this.name} thread restarted`);
    }
    this.cause = undefined;
    this.setState('running');
  }

  private exited(cause: Error): void {
    this.worker = undefined;
    if (this.closing) return;
    const whileRunning = this.state === 'running';
    this.cause = cause;
    this.lastCause = cause;
    let restartInMs: number | undefined;
    if (this.restartsStopped) {
      this.options.log.error({ err: cause, thread: this.name }, `${this.name} thread crashed during shutdown, not restarted`);
      this.setState('closed');
    } else {
      // A thread that lived a while gets a quick replacement; one that keeps dying early, a slower one each time.
      const lived = performance.now() - this.startedAt;
      this.delayMs = this.delayMs === 0 || lived >= this.policy.stableMs ? this.policy.firstDelayMs : Math.min(this.delayMs * 2, this.policy.maxDelayMs);
      this.options.log.error({ err: cause, thread: this.name, restart_in_ms: this.delayMs }, `${this.name} thread crashed, restarting`);
      this.setState('restarting');
      this.timer = setTimeout(() => void this.restart(), (restartInMs = this.delayMs));
    }
    this.options.onCrash?.(cause, whileRunning);
    this.emit('crash', cause, restartInMs);
  }

  private async restart(): Promise<void> {
    this.timer = undefined;
    const held = heldRestarts.get(this);
    if (held) {
      heldRestarts.delete(this);
      await held;
    }
    if (this.restartsStopped || this.worker) return;
    try {
      this.start();
    } catch (error) {
      // The thread could not even be created (out of memory, too many threads): same as dying at start.
      return this.exited(new Error(`cannot start the ${this.name} thread: ${(error as Error).message}`, { cause: error }));
    }
    this.options.onRestart?.();
  }

  private setState(state: ThreadState): void {
    if (this.state === state) return;
    this.state = state;
    this.emit('state', state);
  }
}

/**
 * Tests only: the thread throws an uncaught error at `moment` (the entry decides what that
 * means). With `holdRestart`, its replacement starts only once the returned function is called
 * (and the back-off delay has passed), so a test can look at the service while no thread runs.
 */
export function crashThreadForTest(status: ThreadStatus, moment: TestCrash, options: { holdRestart?: boolean } = {}): () => void {
  if (!(status instanceof SupervisedThread)) throw new TypeError(`${status.name} is not a supervised thread`);
  let release = () => {};
  if (options.holdRestart) heldRestarts.set(status, new Promise<void>((resolve) => (release = resolve)));
  if (typeof moment === 'object') stickyTestCrashes.set(status, moment);
  if (!status.post({ testCrash: moment })) throw new Error(`the ${status.name} thread is not running`);
  return release;
}
