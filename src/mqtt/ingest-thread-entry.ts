import { parentPort, workerData } from 'node:worker_threads';
import type { IngestMessage } from '../domain/ingest.js';
import { openStore } from '../store/open.js';
import { THREAD_READY, type TestCrash } from '../threads/supervised-thread.js';
import { unpackBatch, type DeletionAnswer, type DeletionJob, type PackedBatch, type WriterThreadData } from './ingest-thread.js';

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

parentPort!.on('message', (message: PackedBatch | 'close' | { testCrash: TestCrash } | { deleteEvents: DeletionJob & { deletion: number } }) => {
  if (message === 'close') {
    void store.close().then(() => parentPort!.close());
    return;
  }
  if ('deleteEvents' in message) {
    // One batch of old events (docs/retention.md), between two commits: on SQLite on this
    // connection, so it never competes with ingest for the write lock; a batch that arrives
    // meanwhile waits for it (TARGET_HOLD_MS), as it waits for the batch before it.
    const { deletion, customerId, cutoff, limit, after } = message.deleteEvents;
    void store.retention.deleteEventsBefore(customerId, cutoff, limit, after).then(
      (batch) => parentPort!.postMessage({ deletion, batch } satisfies DeletionAnswer),
      (error: unknown) => parentPort!.postMessage({ deletion, error: error instanceof Error ? error.message : String(error) } satisfies DeletionAnswer),
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
    else parentPort!.postMessage(result);
  });
});
parentPort!.postMessage(THREAD_READY);
