// The body of a job-analysis worker thread: its own read-only connection to the deployment
// database, one analysis at a time, so the main thread keeps serving requests and ingest.
import { parentPort, workerData } from 'node:worker_threads';
import { analyzeStoredJobs, type AnalysisRequest } from './job-events.js';
import { openDatabase } from './open.js';

export interface AnalysisTask {
  taskId: number;
  request: AnalysisRequest;
}

export type AnalysisAnswer =
  | { taskId: number; results: ReturnType<typeof analyzeStoredJobs> }
  | { taskId: number; error: string };

const db = openDatabase((workerData as { file: string }).file, { readonly: true });
// Reads only: map the file instead of copying pages through read(2), and keep a large cache.
db.pragma('mmap_size = 1073741824');
db.pragma('cache_size = -65536');

parentPort!.on('message', (task: AnalysisTask) => {
  let answer: AnalysisAnswer;
  try {
    answer = { taskId: task.taskId, results: analyzeStoredJobs(db, task.request) };
  } catch (error) {
    answer = { taskId: task.taskId, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort!.postMessage(answer);
});
