import { parentPort, workerData } from 'node:worker_threads';
import { IngestStore, tuneForIngest } from '../store/ingest.js';
import { openDatabase } from '../store/open.js';
import { createCommitter } from './commit.js';
import { unpackBatch, type PackedBatch } from './ingest-thread.js';

// The writer thread: its own connection to the deployment database (WAL lets the HTTP API read
// meanwhile); commits each batch it is sent and answers with the result.
const db = openDatabase((workerData as { databaseFile: string }).databaseFile, { migrate: false });
// 20,000 pages = 80 MiB of WAL before the writer checkpoints itself (the checkpointer normally keeps up).
tuneForIngest(db, 20_000);
const commit = createCommitter(new IngestStore(db));

parentPort!.on('message', (message: PackedBatch | 'close') => {
  if (message === 'close') {
    db.close();
    parentPort!.close();
    return;
  }
  parentPort!.postMessage(commit(unpackBatch(message)));
});
