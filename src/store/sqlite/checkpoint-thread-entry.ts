import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from './open.js';
import type { CheckpointReport } from './checkpointer.js';
import { storageFullOf } from './storage.js';
import { THREAD_READY, type TestCrash } from '../../threads/supervised-thread.js';

// The checkpointer thread: copies committed WAL frames back into the database file (and syncs
// it) every CHECKPOINT_INTERVAL_MS, so that the writer thread does not stall on that copying and
// syncing between two batches. PASSIVE never blocks the writer or readers.
const CHECKPOINT_INTERVAL_MS = 200;

const { databaseFile } = workerData as { databaseFile: string };
const db = openDatabase(databaseFile, { migrate: false });
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
// The failure being reported: a full disk fails every round, and is told once, then once more when it passes.
let failing: string | undefined;
const timer = setInterval(() => {
  try {
    checkpoint.run();
  } catch (error) {
    // Busy or failed this time: the next round, or the writer's own checkpoint, catches up.
    const message = (error as Error).message;
    if (message !== failing) parentPort!.postMessage({ checkpointError: message, storageFull: storageFullOf(error, databaseFile)?.message } satisfies CheckpointReport);
    failing = message;
    return;
  }
  if (failing !== undefined) parentPort!.postMessage({ checkpointRecovered: failing } satisfies CheckpointReport);
  failing = undefined;
}, CHECKPOINT_INTERVAL_MS);

parentPort!.on('message', (message: 'close' | { testCrash: TestCrash }) => {
  // Only crashThreadForTest sends this: the tests make this thread die for real.
  if (typeof message === 'object' && message.testCrash) throw new Error('test crash of the checkpointer thread');
  if (message !== 'close') return;
  clearInterval(timer);
  db.close();
  parentPort!.close();
});
parentPort!.postMessage(THREAD_READY);
