// The body of the event deleter's thread (docs/retention.md): its own connection to the deployment
// database, one batch at a time, so that the server's event loop never waits on SQLite's write
// lock or on the deletion itself.
import { workerData } from 'node:worker_threads';
import { answerTasks } from '../../threads/task-pool.js';
import { batchDeleter, type DeletionTask } from './event-deleter.js';
import { openDatabase } from './open.js';

const db = openDatabase((workerData as { file: string }).file, { migrate: false });
// A deletion touches pages all over the indexes: a larger cache spares re-reading them. The
// checkpointer thread copies the WAL back; this connection does it itself only past 20,000 pages
// (80 MiB), as the ingest writer, so a commit here never checkpoints.
db.pragma('cache_size = -32768');
db.pragma('wal_autocheckpoint = 20000');
const deleteBatch = batchDeleter(db);

answerTasks((task: DeletionTask) => deleteBatch(task.customerId, task.cutoff, task.limit, task.after));
