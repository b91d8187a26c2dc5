import type { GatewayJobs, JobBarcodes, TimeRange } from '../../domain/job-analysis.js';
import type { JobConfig, JobConfigFields, JobConfigRefusal } from '../../domain/job-configs.js';

export type { JobConfig, JobConfigFields, JobConfigRefusal };

/** Job configurations of each customer, and the per-customer revision that is the list's ETag. */
export interface JobConfigRepository {
  /** The list and the revision (its ETag) from one snapshot. */
  list(customerId: string): Promise<{ revision: number; items: JobConfig[] }>;
  byId(customerId: string, id: string): Promise<JobConfig | undefined>;
  create(customerId: string, id: string, fields: JobConfigFields, now: number): Promise<JobConfig | JobConfigRefusal>;
  update(customerId: string, id: string, changes: Partial<JobConfigFields>, now: number, expectedVersion?: number): Promise<JobConfig | JobConfigRefusal>;
  delete(customerId: string, id: string): Promise<boolean>;
}

/** Everything an analysis needs, as plain data (it crosses a worker boundary). */
export interface AnalysisRequest {
  gatewayIds: string[];
  barcodes: JobBarcodes;
  range: TimeRange;
}

export interface JobAnalysisRepository {
  /** The analysis as the JSON body `{"results":[...]}` (GatewayJobs per gateway), off the main thread where the store can. */
  analyze(request: AnalysisRequest): Promise<Buffer>;
  /** The same as objects (tests, the CLI's checks). */
  analyzeToObjects?(request: AnalysisRequest): Promise<GatewayJobs[]>;
}
