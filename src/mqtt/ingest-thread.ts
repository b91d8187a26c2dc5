import { Outcome, type BatchResult, type IngestMessage, type Quarantine } from '../domain/ingest.js';
import type { CreatedWindow } from '../domain/payload-limits.js';
import type { StoreThread } from '../store/ports/index.js';
import type { CreatedIdKey } from '../domain/page-token.js';
import type { CommandWrite, CommandWritesDone, DeletedBatch, StoreLocator, WebhookWrite, WebhookWritesDone, WriteFailure } from '../store/ports/index.js';
import { writeError } from '../store/ports/index.js';
import { workerScript } from '../threads/worker-script.js';
import { SupervisedThread, type ThreadLog, type ThreadStatus } from '../threads/supervised-thread.js';

/** One batch of the deletion of old events (docs/retention.md), as the writer thread runs it between its commits. */
export interface DeletionJob {
  customerId: string;
  cutoff: number;
  limit: number;
  after?: CreatedIdKey;
}

/**
 * Work the writer thread runs between its commits, on its own connection, so that on SQLite it
 * never competes with ingest for the write lock: a batch of old events to delete
 * (docs/retention.md), a group of the writes of command delivery (docs/commands.md "Delivery"),
 * or of webhook delivery (docs/webhooks.md "Delivery").
 */
export type ThreadJob = { deleteEvents: DeletionJob } | { commandWrites: CommandWrite[] } | { webhookWrites: WebhookWrite[] };

/** What the writer thread answers to a job, by its number. */
export type JobAnswer = { job: number; result: unknown } | { job: number; error: WriteFailure };

/** Where a batch is committed: in this thread, or in the writer thread. */
export interface CommitBackend {
  /** Commits the batch and calls `done` once with its result (synchronously or later); `handOff`: with the events stored (BatchResult.committed). */
  commit(batch: IngestMessage[], done: (result: BatchResult) => void, handOff?: boolean): void;
  /** Deletes one batch of old events on the writer's connection, between two commits. */
  deleteEvents(job: DeletionJob): Promise<DeletedBatch>;
  /** Runs a group of the writes of command delivery on the writer's connection, between two commits. */
  commandWrites(writes: CommandWrite[]): Promise<CommandWritesDone>;
  /** Runs a group of the writes of webhook delivery on the writer's connection, between two commits. */
  webhookWrites(writes: WebhookWrite[]): Promise<WebhookWritesDone>;
  /** Shutdown began: a thread that dies now is not replaced; a batch waiting for one fails. */
  stopRestarts(): void;
  close(): Promise<void>;
}

/** A batch as it crosses to the writer thread: one transferred buffer instead of a clone per message. */
export interface PackedBatch {
  gatewayIds: string[];
  receivedAt: Float64Array;
  /** Payload i is bytes.subarray(ends[i - 1] ?? 0, ends[i]). */
  ends: Uint32Array;
  bytes: Uint8Array;
  /** The quarantined messages by index; absent when there is none (nearly always). */
  quarantines?: [number, Quarantine][];
  /** The result is to carry the events stored (BatchResult.committed). */
  handOff?: true;
}

/** What the writer thread is started with. */
export interface WriterThreadData {
  /** The store the thread opens for ingest. */
  locator: StoreLocator;
  createdWindow?: CreatedWindow;
}

/** Packs the batch into transferable arrays. */
export function packBatch(batch: IngestMessage[]): PackedBatch {
  const ends = new Uint32Array(batch.length);
  const receivedAt = new Float64Array(batch.length);
  const gatewayIds = new Array<string>(batch.length);
  let total = 0;
  let quarantines: [number, Quarantine][] | undefined;
  for (let i = 0; i < batch.length; i++) {
    const { payload, quarantine } = batch[i]!;
    ends[i] = total += payload.length;
    if (quarantine) (quarantines ??= []).push([i, quarantine]);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (let i = 0; i < batch.length; i++) {
    const message = batch[i]!;
    bytes.set(message.payload, offset);
    offset += message.payload.length;
    receivedAt[i] = message.receivedAt;
    gatewayIds[i] = message.gatewayId;
  }
  return quarantines ? { gatewayIds, receivedAt, ends, bytes, quarantines } : { gatewayIds, receivedAt, ends, bytes };
}

/** The messages of a packed batch (payloads are views, not copies). */
export function unpackBatch(packed: PackedBatch): IngestMessage[] {
  const batch = new Array<IngestMessage>(packed.ends.length);
  let start = 0;
  for (let i = 0; i < batch.length; i++) {
    const end = packed.ends[i]!;
    batch[i] = { gatewayId: packed.gatewayIds[i]!, receivedAt: packed.receivedAt[i]!, payload: packed.bytes.subarray(start, end) };
    start = end;
  }
  for (const [index, quarantine] of packed.quarantines ?? []) batch[index]!.quarantine = quarantine;
  return batch;
}

/** The threads behind ingest, for /healthz and tests. */
export interface IngestThreads {
  /** Commits the batches: while it is not running, nothing is acknowledged. */
  writer: ThreadStatus;
  /** Threads the store runs beside the writer (SQLite: the WAL checkpointer); not on the PUBACK path. */
  maintenance: ThreadStatus[];
}

function failedBatch(size: number, reason: string, outcome: Outcome = Outcome.FAILED): BatchResult {
  return { outcomes: new Array<Outcome>(size).fill(outcome), reasons: new Array<string>(size).fill(reason), events: 0, duplicates: 0, reports: 0, devices: 0 };
}

/** The answer for a batch the writer thread died with: IngestWriter retries its messages alone. */
function crashedBatch(size: number, cause: Error, whileRunning: boolean): BatchResult {
  const reason = `writer thread failed: ${cause.message}`;
  return { ...failedBatch(size, reason, Outcome.CRASHED), crash: { cause: cause.message, whileRunning } };
}

/** A thread the store runs beside the writer: its warnings are logged, a full disk reported. */
function startMaintenanceThread(thread: StoreThread, log: ThreadLog, onStorageFull: (reason: string) => void): SupervisedThread {
  return new SupervisedThread({
    name: thread.name,
    entry: thread.entry,
    workerData: thread.workerData,
    log,
    onMessage: (message) => {
      const { fields, message: text, storageFull } = thread.warning(message);
      log.warn(fields, text);
      if (storageFull) onStorageFull(storageFull);
    },
  });
}

/**
 * Commits in a worker thread with its own connection to the store, so that TLS and MQTT (this
 * thread) and the database work run on two cores, with the store's maintenance threads beside it.
 * One batch is in the writer thread at a time; the next one fills up meanwhile. A thread that dies
 * is replaced (SupervisedThread): its batch is answered as crashed, and the next waits for it.
 */
export function startIngestThread(
  data: WriterThreadData,
  maintenance: StoreThread[],
  log: ThreadLog,
  onStorageFull: (reason: string) => void = () => undefined,
): CommitBackend & { threads: IngestThreads } {
  let pending: ((result: BatchResult) => void) | undefined;
  let size = 0;
  // Handed over while no writer thread runs: goes to the replacement.
  let waiting: PackedBatch | undefined;
  const answer = (result: BatchResult) => {
    const done = pending;
    pending = undefined;
    waiting = undefined;
    done?.(result);
  };
  const send = (packed: PackedBatch) => writer.post(packed, [packed.bytes.buffer, packed.ends.buffer, packed.receivedAt.buffer] as ArrayBuffer[]);
  // Jobs in the thread, by number: a deletion batch (one pass per instance) and the command writes of a turn or two.
  const jobs = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void; failed: string }>();
  let nextJob = 1;
  const failJobs = (reason: string) => {
    for (const { reject } of jobs.values()) reject(new Error(reason));
    jobs.clear();
  };
  const runJob = async <R>(job: ThreadJob, failed: string): Promise<R> => {
    // A thread not ready yet (at start, or after a crash): the job waits for it.
    while (writer.state === 'starting' || writer.state === 'restarting') await Promise.race([writer.reached('running'), writer.reached('closed')]);
    if (writer.state !== 'running') throw new Error(`the ingest writer thread is ${writer.state}`);
    return new Promise<R>((resolve, reject) => {
      const id = nextJob++;
      jobs.set(id, { resolve: resolve as (result: unknown) => void, reject, failed });
      writer.post({ job: { id, ...job } });
    });
  };
  const writer = new SupervisedThread({
    name: 'ingest writer',
    entry: workerScript(import.meta.url, './ingest-thread-entry.js'),
    workerData: data,
    log,
    onMessage: (message) => {
      if (typeof message === 'object' && message !== null && 'job' in message) {
        const answered = message as JobAnswer;
        const job = jobs.get(answered.job);
        jobs.delete(answered.job);
        // With the driver's code: the store's wrapper of the routed write tells a full disk by it (StorageFull).
        if ('error' in answered) job?.reject(writeError({ ...answered.error, message: `${job.failed}: ${answered.error.message}` }));
        else job?.resolve(answered.result);
        return;
      }
      answer(message as BatchResult);
    },
    // The batch may have committed or not: IngestWriter commits its messages again, one by one,
    // and the event ids make a second copy of a committed one a duplicate, not a new event. With
    // a job in the thread too, no message alone is to blame for the crash.
    onCrash: (cause, whileRunning) => {
      const working = jobs.size > 0;
      failJobs(`the ingest writer thread stopped: ${cause.message}`);
      answer(crashedBatch(size, cause, whileRunning && !working));
    },
    onRestart: () => {
      if (waiting && send(waiting)) waiting = undefined;
    },
  });
  const others = maintenance.map((thread) => startMaintenanceThread(thread, log, onStorageFull));
  return {
    threads: { writer, maintenance: others },
    commit(batch, done, handOff) {
      if (pending) throw new Error('one batch at a time');
      pending = done;
      size = batch.length;
      if (writer.state === 'closed') return answer(failedBatch(size, 'the writer thread is closed'));
      const packed = packBatch(batch);
      if (handOff) packed.handOff = true;
      if (!send(packed)) waiting = packed;
    },
    deleteEvents: (job) => runJob({ deleteEvents: job }, 'deleting old events failed'),
    commandWrites: (writes) => runJob({ commandWrites: writes }, 'writing commands failed'),
    webhookWrites: (writes) => runJob({ webhookWrites: writes }, 'writing webhook deliveries failed'),
    stopRestarts() {
      writer.stopRestarts();
      for (const thread of others) thread.stopRestarts();
      if (waiting) answer(failedBatch(size, 'shutting down while the writer thread restarts'));
    },
    async close() {
      await Promise.all([writer.close(), ...others.map((thread) => thread.close())]);
      if (pending) answer(failedBatch(size, 'the writer thread is closed'));
      failJobs('the writer thread is closed');
    },
  };
}
