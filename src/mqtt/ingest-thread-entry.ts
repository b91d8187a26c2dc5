import { parentPort, workerData } from 'node:worker_threads';
import { IngestStore, tuneForIngest } from '../store/ingest.js';
import { openDatabase } from '../store/open.js';
import { createCommitter } from './commit.js';
import { unpackBatch, type PackedBatch } from './ingest-thread.js';
import { THREAD_READY, type TestCrash } from './supervised-thread.js';

// The writer thread: its own connection to the deployment database (WAL lets the HTTP API read
// meanwhile); commits each batch it is sent and answers with the result.
const db = openDatabase((workerData as { databaseFile: string }).databaseFile, { migrate: false });
// 20,000 pages = 80 MiB of WAL before the writer checkpoints itself (the checkpointer normally keeps up).
tuneForIngest(db, 20_000);
const commit = createCommitter(new IngestStore(db));
// Set only by crashThreadForTest: the tests make this thread die for real around a batch.
let testCrash: TestCrash | undefined;

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
  const result = commit(unpackBatch(message));
  if (testCrash === 'after-commit') throw new Error('test crash after commit');
  parentPort!.postMessage(result);
});
parentPort!.postMessage(THREAD_READY);
