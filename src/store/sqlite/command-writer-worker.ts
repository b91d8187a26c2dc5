// The body of the command writer's thread (docs/commands.md "Delivery"): its own connection to the
// deployment database, one write at a time, so that the server's event loop never waits on
// SQLite's write lock while the ingest writer commits.
import { workerData } from 'node:worker_threads';
import { answerTasks } from '../../threads/task-pool.js';
import type { CommandWrite } from '../ports/index.js';
import { runCommandWrites } from './command-writes.js';
import { openDatabase } from './open.js';

const db = openDatabase((workerData as { file: string }).file, { migrate: false });
// The checkpointer thread copies the WAL back: a commit here never checkpoints (as the ingest writer).
db.pragma('wal_autocheckpoint = 20000');

answerTasks((writes: CommandWrite[]) => runCommandWrites(db, writes));
