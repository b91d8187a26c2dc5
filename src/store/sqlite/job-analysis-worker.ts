// The body of a job-analysis worker thread: its own read-only connection to the deployment
// database, one analysis at a time, so the main thread keeps serving requests and ingest.
import { workerData } from 'node:worker_threads';
import { answerTasks } from '../../threads/task-pool.js';
import type { AnalysisRequest } from '../ports/index.js';
import { analyzeStoredJobsToJson } from './job-events.js';
import { openDatabase } from './open.js';

const db = openDatabase((workerData as { file: string }).file, { readonly: true });
// Reads only: map the file instead of copying pages through read(2), and keep a large cache.
db.pragma('mmap_size = 1073741824');
db.pragma('cache_size = -65536');

// The response body `{"results":[...]}`, its memory transferred rather than copied.
answerTasks(
  (request: AnalysisRequest): Uint8Array => {
    const json = analyzeStoredJobsToJson(db, request);
    // A Buffer may be a view into Node's shared pool: copy into an own ArrayBuffer only if so.
    return json.byteOffset === 0 && json.byteLength === json.buffer.byteLength ? json : Uint8Array.prototype.slice.call(json);
  },
  (json) => [json.buffer as ArrayBuffer],
);
