import { parentPort, workerData } from 'node:worker_threads';
import type { IngestMessage } from '../domain/ingest.js';
import { openStore } from '../store/open.js';
import { writeFailure } from '../store/ports/index.js';
import { transferred } from '../store/shared/committed-events.js';
import { THREAD_READY, type TestCrash } from '../threads/supervised-thread.js';
import { unpackBatch, type JobAnswer, type PackedBatch, type ThreadJob, type WriterThreadData } from './ingest-thread.js';

// The writer thread: its own connection to the store (SQLite: WAL lets the HTTP API read
// meanwhile); commits each batch it is sent, one group commit per batch, and answers with the result.
const { locator, createdWindow } = workerData as WriterThreadData;
const store = await openStore(locator, 'ingest');
// Set only by crashThreadForTest: the tests make this thread die for real around a batch.
let testCrash: TestCrash | undefined;

/** Tests only: whether a message to parse (not a dead letter) carries the crash marker. */
const carriesMarker = (batch: IngestMessage[], marker: string) =>
  batch.some((message) => !message.quarantine && Buffer.from(message.payload).includes(marker));

/** Throws outside the promise chain, so that the thread dies as from any uncaught error. */
const die = (reason: string): never => {
  throw new Error(reason);
};

/**
 * A job between two commits: on SQLite on this connection, so it never competes with ingest for
 * the write lock; a batch that arrives meanwhile waits for it (TARGET_HOLD_MS), as it waits for the
 * batch before it. Old events (docs/retention.md), the writes of command delivery (docs/commands.md)
 * or of webhook delivery (docs/webhooks.md).
 */
async function runJob(job: ThreadJob): Promise<unknown> {
  if ('deleteEvents' in job) {
    const { customerId, cutoff, limit, after } = job.deleteEvents;
    return store.retention.deleteEventsBefore(customerId, cutoff, limit, after);
  }
  if ('webhookWrites' in job) {
    if (!store.webhooks.runWrites) throw new Error('this store runs no webhook writes in the writer thread');
    return store.webhooks.runWrites(job.webhookWrites);
  }
  if (!store.commands.runWrites) throw new Error('this store runs no command writes in the writer thread');
  return store.commands.runWrites(job.commandWrites);
}

parentPort!.on('message', (message: PackedBatch | 'close' | { testCrash: TestCrash } | { job: ThreadJob & { id: number } }) => {
  if (message === 'close') {
    void store.close().then(() => parentPort!.close());
    return;
  }
  if ('job' in message) {
    const { id, ...job } = message.job;
    void runJob(job).then(
      (result) => parentPort!.postMessage({ job: id, result } satisfies JobAnswer),
      (error: unknown) => parentPort!.postMessage({ job: id, error: writeFailure(error) } satisfies JobAnswer),
    );
    return;
  }
  if ('testCrash' in message) {
    if (message.testCrash === 'now') die('test crash of the writer thread');
    testCrash = message.testCrash;
    return;
  }
  if (testCrash === 'before-commit') die('test crash before commit');
  const batch = unpackBatch(message);
  if (typeof testCrash === 'object' && carriesMarker(batch, testCrash.payloadContains)) die('test crash on a marked payload');
  // One batch at a time (the broker sends the next one after this answer): one await per batch.
  void store.ingest.commit(batch, createdWindow, message.handOff).then((result) => {
    if (testCrash === 'after-commit') setImmediate(() => die('test crash after commit'));
    // The commit's events for the webhooks move to the server's thread, not copied.
    else parentPort!.postMessage(result, result.committed ? transferred(result.committed) : []);
  });
});
parentPort!.postMessage(THREAD_READY);
