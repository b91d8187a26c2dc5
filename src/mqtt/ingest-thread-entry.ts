import { parentPort, workerData } from 'node:worker_threads';
import { IngestStore, tuneForIngest } from '../store/ingest.js';
import { openDatabase } from '../store/open.js';
import { createCommitter, type IngestMessage } from './commit.js';
import { unpackBatch, type PackedBatch, type WriterThreadData } from './ingest-thread.js';
import { THREAD_READY, type TestCrash } from './supervised-thread.js';

// The writer thread: its own connection to the deployment database (WAL lets the HTTP API read
// meanwhile); commits each batch it is sent and answers with the result.
const { databaseFile, createdWindow } = workerData as WriterThreadData;
const db = openDatabase(databaseFile, { migrate: false });
// 20,000 pages = 80 MiB of WAL before the writer checkpoints itself (the checkpointer normally keeps up).
tuneForIngest(db, 20_000);
const commit = createCommitter(new IngestStore(db), createdWindow);
// Set only by crashThreadForTest: the tests make this thread die for real around a batch.
let testCrash: TestCrash | undefined;

/** Tests only: whether a message to parse (not a dead letter) carries the crash marker. */
const carriesMarker = (batch: IngestMessage[], marker: string) =>
  batch.some((message) => !message.quarantine && Buffer.from(message.payload).includes(marker));

parentPort!.on('message', (message: PackedBatch | 'close' | { testCrash: TestCrash }) => {
  if (message === 'close') {
    db.close();
    parentPort!.close();
    return;
  }
  if ('testCrash' in message) {
    if (message.testCrash === 'now') throw new Error('test crash of the writer thread');
    testCrash = message.testCrash;
    return;
  }
  if (testCrash === 'before-commit') throw new Error('test crash before commit');
  const batch = unpackBatch(message);
  if (typeof testCrash === 'object' && carriesMarker(batch, testCrash.payloadContains)) throw new Error('test crash on a marked payload');
  const result = commit(batch);
  if (testCrash === 'after-commit') throw new Error('test crash after commit');
  parentPort!.postMessage(result);
});
parentPort!.postMessage(THREAD_READY);
