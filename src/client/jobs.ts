import { seg, type CustomerApi } from './api.js';
import type { JobConfig, JobConfigFields } from '../domain/job-configs.js';

/** A job configuration and the fields a write sets: the API shows the domain's record as is. */
export type { JobConfig, JobConfigFields };

/** The answer of `POST /{customer_id}/job-analysis` (docs/jobs-and-assets.md "Job analysis"). */
export interface JobAnalysis {
  results: { gateway_id: string; jobs: { start_time: number; end_time: number; start_event_id: string; end_event_id: string }[] }[];
}

/** A job analysis request: the configuration and the range, in milliseconds. */
export interface JobAnalysisRequest {
  job_config_id: string;
  start_time: number;
  end_time: number;
}

const jobConfigsPath = (api: CustomerApi) => `${api.base}/job-configs`;
const jobConfigPath = (api: CustomerApi, jobConfigId: string) => `${jobConfigsPath(api)}/${seg(jobConfigId)}`;

/** The customer's job configurations (the first page of the list). */
export async function listJobConfigs(api: CustomerApi): Promise<JobConfig[]> {
  return (await api.client.get<{ items: JobConfig[] }>(jobConfigsPath(api))).items;
}

/** One job configuration, by id. */
export function getJobConfig(api: CustomerApi, jobConfigId: string): Promise<JobConfig> {
  return api.client.get<JobConfig>(jobConfigPath(api, jobConfigId));
}

/** Creates a job configuration. */
export function createJobConfig(api: CustomerApi, fields: Partial<JobConfigFields>): Promise<JobConfig> {
  return api.client.post<JobConfig>(jobConfigsPath(api), fields);
}

/** Changes the given fields, only while the configuration is still at `version`: a change made meanwhile is refused, not overwritten. */
export function updateJobConfig(api: CustomerApi, jobConfigId: string, changes: Partial<JobConfigFields>, version: number): Promise<JobConfig> {
  return api.client.patch<JobConfig>(jobConfigPath(api, jobConfigId), changes, { 'if-match': String(version) });
}

/** Deletes a job configuration. */
export function deleteJobConfig(api: CustomerApi, jobConfigId: string): Promise<void> {
  return api.client.delete(jobConfigPath(api, jobConfigId));
}

/** The jobs of a configuration in a range, per gateway. */
export function analyzeJobs(api: CustomerApi, request: JobAnalysisRequest): Promise<JobAnalysis> {
  return api.client.post<JobAnalysis>(`${api.base}/job-analysis`, request);
}
