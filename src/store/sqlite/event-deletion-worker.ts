// The body of the event-deletion thread (docs/retention.md): its own connection to the deployment
// database, one batch at a time, so that the server's event loop never waits on SQLite's write
// lock or on the deletion itself.
import { parentPort, workerData } from 'node:worker_threads';
import type { CreatedIdKey } from '../../domain/page-token.js';
import type { DeletedBatch } from '../ports/index.js';
import { batchDeleter } from './event-deletion.js';
import { openDatabase } from './open.js';

export interface DeletionTask {
  taskId: number;
  customerId: string;
  cutoff: number;
  limit: number;
  after?: CreatedIdKey;
}

export type DeletionAnswer = ({ taskId: number } & DeletedBatch) | { taskId: number; error: string };

const db = openDatabase((workerData as { file: string }).file, { migrate: false });
// Deleting random event ids touches about one page of the id index per event: a larger cache
// spares re-reading them. The checkpointer thread copies the WAL back; this connection does it
// itself only past 20,000 pages (80 MiB), as the ingest writer, so a commit here never checkpoints.
db.pragma('cache_size = -32768');
db.pragma('wal_autocheckpoint = 20000');
const deleteBatch = batchDeleter(db);

parentPort!.on('message', (task: DeletionTask) => {
  let answer: DeletionAnswer;
  try {
    answer = { taskId: task.taskId, ...deleteBatch(task.customerId, task.cutoff, task.limit, task.after) };
  } catch (error) {
    answer = { taskId: task.taskId, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort!.postMessage(answer);
});
