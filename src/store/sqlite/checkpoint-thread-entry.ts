import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from './open.js';
import type { CheckpointReport } from './checkpointer.js';
import { storageFullOf } from './storage.js';
import { THREAD_READY, type TestCrash } from '../../threads/supervised-thread.js';

// The checkpointer thread: copies committed WAL frames back into the database file (and syncs
// it) every CHECKPOINT_INTERVAL_MS, so that the writer thread does not stall on that copying and
// syncing between two batches. PASSIVE never blocks the writer or readers.
const CHECKPOINT_INTERVAL_MS = 200;
// The WAL starts over from its beginning only when the writer begins a transaction with every
// frame copied back; under steady ingest a commit nearly always lands during a checkpoint, so the
// WAL would grow to the writer's own checkpoint at its limit (tuneForIngest), a stall of ingest
// (bench/README.md "retention"). Past RESTART_PAGES frames this thread checkpoints again at once,
// up to RESTART_TRIES times: those short rounds copy only the frames committed meanwhile, and one
// of them ends between two commits, so the writer starts the WAL over without a stall.
const RESTART_PAGES = 4000;
const RESTART_TRIES = 5;

const { databaseFile } = workerData as { databaseFile: string };
const db = openDatabase(databaseFile, { migrate: false });
const checkpoint = db.prepare<[], { busy: number; log: number; checkpointed: number }>('PRAGMA wal_checkpoint(PASSIVE)');
// The failure being reported: a full disk fails every round, and is told once, then once more when it passes.
let failing: string | undefined;
let timer: NodeJS.Timeout | undefined;
let tries = 0;
/** The WAL's frames after the last round. */
let lastWalPages = -1;

/** One checkpoint; the next one right away while the WAL stays long, else after the interval. */
function round(): void {
  let walPages: number;
  try {
    walPages = checkpoint.get()!.log;
  } catch (error) {
    // Busy or failed this time: the next round, or the writer's own checkpoint, catches up.
    const message = (error as Error).message;
    if (message !== failing) parentPort!.postMessage({ checkpointError: message, storageFull: storageFullOf(error, databaseFile)?.message } satisfies CheckpointReport);
    failing = message;
    tries = 0;
    timer = setTimeout(round, CHECKPOINT_INTERVAL_MS);
    return;
  }
  if (failing !== undefined) parentPort!.postMessage({ checkpointRecovered: failing } satisfies CheckpointReport);
  failing = undefined;
  // A WAL that has not grown since the last round has no commits to race with (an idle writer):
  // the next write restarts it, so there is nothing to try again for.
  tries = walPages > RESTART_PAGES && walPages !== lastWalPages ? tries + 1 : 0;
  lastWalPages = walPages;
  const again = tries > 0 && tries <= RESTART_TRIES;
  if (tries > RESTART_TRIES) tries = 0;
  timer = setTimeout(round, again ? 0 : CHECKPOINT_INTERVAL_MS);
}
timer = setTimeout(round, CHECKPOINT_INTERVAL_MS);

parentPort!.on('message', (message: 'close' | { testCrash: TestCrash }) => {
  // Only crashThreadForTest sends this: the tests make this thread die for real.
  if (typeof message === 'object' && message.testCrash) throw new Error('test crash of the checkpointer thread');
  if (message !== 'close') return;
  clearTimeout(timer);
  db.close();
  parentPort!.close();
});
parentPort!.postMessage(THREAD_READY);
