// The body of a job-analysis worker thread: its own read-only connection to the deployment
// database, one analysis at a time, so the main thread keeps serving requests and ingest.
import { parentPort, workerData } from 'node:worker_threads';
import type { AnalysisRequest } from '../ports/index.js';
import { analyzeStoredJobsToJson } from './job-events.js';
import { openDatabase } from './open.js';

export interface AnalysisTask {
  taskId: number;
  request: AnalysisRequest;
}

/** `json` is the response body `{"results":[...]}`, its memory transferred rather than copied. */
export type AnalysisAnswer = { taskId: number; json: Uint8Array } | { taskId: number; error: string };

const db = openDatabase((workerData as { file: string }).file, { readonly: true });
// Reads only: map the file instead of copying pages through read(2), and keep a large cache.
db.pragma('mmap_size = 1073741824');
db.pragma('cache_size = -65536');

parentPort!.on('message', (task: AnalysisTask) => {
  let json: Buffer;
  try {
    json = analyzeStoredJobsToJson(db, task.request);
  } catch (error) {
    const answer: AnalysisAnswer = { taskId: task.taskId, error: error instanceof Error ? error.message : String(error) };
    parentPort!.postMessage(answer);
    return;
  }
  // A Buffer may be a view into Node's shared pool: copy into an own ArrayBuffer only if so.
  const own = json.byteOffset === 0 && json.byteLength === json.buffer.byteLength ? json : Uint8Array.prototype.slice.call(json);
  const answer: AnalysisAnswer = { taskId: task.taskId, json: own };
  parentPort!.postMessage(answer, [own.buffer as ArrayBuffer]);
});
