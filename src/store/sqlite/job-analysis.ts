import { availableParallelism } from 'node:os';
import type { GatewayJobs } from '../../domain/job-analysis.js';
import { TaskPool } from '../../threads/task-pool.js';
import type { AnalysisRequest, JobAnalysisRepository } from '../ports/index.js';
import { analyzeStoredJobs, analyzeStoredJobsToJson } from './job-events.js';
import type { Db } from './open.js';

/**
 * Job analyses in a small pool (one thread per spare core, at most two) of long-lived worker
 * threads on their own read-only connections, started on first use and reused; analyses beyond
 * the pool's size wait. An in-memory database cannot be shared with a thread: it is analysed inline.
 */
export class SqliteJobAnalysis implements JobAnalysisRepository {
  private readonly pool: TaskPool<AnalysisRequest, Uint8Array>;

  constructor(
    private readonly db: Db,
    // One core stays for HTTP and ingest: on two cores analyses run one at a time.
    size = Math.max(1, Math.min(2, availableParallelism() - 1)),
  ) {
    this.pool = new TaskPool({
      script: { from: import.meta.url, relative: './job-analysis-worker.js' },
      workerData: { file: db.name },
      size,
      failed: 'job analysis failed',
      stopped: 'job analysis worker stopped',
      closed: 'the job analysis pool is closed',
    });
  }

  /** The analysis as the JSON body `{"results":[...]}`, computed off the main thread. */
  analyze(request: AnalysisRequest): Promise<Buffer> {
    // Once closed the pool refuses, before this connection (which may be closed by now) is used.
    if (this.db.memory && !this.pool.closed) return Promise.resolve(analyzeStoredJobsToJson(this.db, request));
    return this.pool.run(request).then((json) => Buffer.from(json.buffer, json.byteOffset, json.byteLength));
  }

  async analyzeToObjects(request: AnalysisRequest): Promise<GatewayJobs[]> {
    return analyzeStoredJobs(this.db, request);
  }

  /** Stops the threads; waiting and running analyses fail. */
  close(): Promise<void> {
    return this.pool.close('the server is shutting down');
  }
}
