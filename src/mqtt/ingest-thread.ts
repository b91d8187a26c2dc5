import { Worker } from 'node:worker_threads';
import type { BatchResult, IngestMessage } from './commit.js';

/** Where a batch is committed: in this thread, or in the writer thread. */
export interface CommitBackend {
  /** Commits the batch and calls `done` once with its result (synchronously or later). */
  commit(batch: IngestMessage[], done: (result: BatchResult) => void): void;
  close(): Promise<void>;
}

/** A batch as it crosses to the writer thread: one transferred buffer instead of a clone per message. */
export interface PackedBatch {
  gatewayIds: string[];
  receivedAt: Float64Array;
  /** Payload i is bytes.subarray(ends[i - 1] ?? 0, ends[i]). */
  ends: Uint32Array;
  bytes: Uint8Array;
}

/** Packs the batch into transferable arrays. */
export function packBatch(batch: IngestMessage[]): PackedBatch {
  const ends = new Uint32Array(batch.length);
  const receivedAt = new Float64Array(batch.length);
  const gatewayIds = new Array<string>(batch.length);
  let total = 0;
  for (let i = 0; i < batch.length; i++) ends[i] = total += batch[i]!.payload.length;
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (let i = 0; i < batch.length; i++) {
    const message = batch[i]!;
    bytes.set(message.payload, offset);
    offset += message.payload.length;
    receivedAt[i] = message.receivedAt;
    gatewayIds[i] = message.gatewayId;
  }
  return { gatewayIds, receivedAt, ends, bytes };
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
  return batch;
}

// Tests run the TypeScript sources; the thread then runs the compiled entry (npm test builds first).
const compiled = (file: string) =>
  import.meta.url.endsWith('.ts') ? new URL(`../../dist/mqtt/${file}`, import.meta.url) : new URL(`./${file}`, import.meta.url);

/**
 * Commits in a worker thread with its own connection to the database file, so that TLS and MQTT
 * (this thread) and SQLite (that one) run on two cores, with a checkpointer thread beside it.
 * One batch is in the writer thread at a time; the next one fills up meanwhile.
 */
export function startIngestThread(databaseFile: string, onError: (error: Error) => void): CommitBackend {
  const worker = new Worker(compiled('ingest-thread-entry.js'), { workerData: { databaseFile } });
  // The checkpointer keeps WAL copying and syncing off the writer's path (docs/gateways-mqtt.md).
  const checkpointer = new Worker(compiled('checkpoint-thread-entry.js'), { workerData: { databaseFile } });
  checkpointer.on('message', (message: { checkpointError?: string }) => message.checkpointError && onError(new Error(`checkpoint failed: ${message.checkpointError}`)));
  checkpointer.on('error', onError);
  let pending: ((result: BatchResult) => void) | undefined;
  let size = 0;
  let failure: Error | undefined;
  const failPending = (error: Error) => {
    failure ??= error;
    const done = pending;
    pending = undefined;
    done?.({ outcomes: new Array(size).fill(3), reasons: new Array(size).fill(`writer thread failed: ${error.message}`), events: 0, duplicates: 0, reports: 0 });
  };
  worker.on('message', (result: BatchResult) => {
    const done = pending;
    pending = undefined;
    done?.(result);
  });
  worker.on('error', (error) => {
    onError(error);
    failPending(error);
  });
  worker.on('exit', (code) => failPending(new Error(`writer thread exited with code ${code}`)));
  return {
    commit(batch, done) {
      if (failure) {
        size = batch.length;
        pending = done;
        return failPending(failure);
      }
      if (pending) throw new Error('one batch at a time');
      pending = done;
      size = batch.length;
      const packed = packBatch(batch);
      worker.postMessage(packed, [packed.bytes.buffer, packed.ends.buffer, packed.receivedAt.buffer] as ArrayBuffer[]);
    },
    async close() {
      checkpointer.postMessage('close');
      worker.postMessage('close');
      await Promise.all([worker, checkpointer].map((thread) => new Promise((resolve) => thread.once('exit', resolve))));
    },
  };
}
