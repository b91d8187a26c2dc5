import { jobStep, type OpenJob } from './job-analysis.js';
import type { JobConfig } from './job-configs.js';
import type { StreamPosition } from './stream-cursor.js';

/**
 * The job tracker (docs/alerts.md "Jobs"): the scans of a customer read once, in commit order,
 * through the analysis' per-gateway step (job-analysis.ts jobStep), keeping what the alert kinds
 * job_open_too_long and station_silent and the `job.completed` message need.
 */

/** A job open on a gateway for a job configuration. */
export interface TrackedJob {
  job_config_id: string;
  gateway_id: string;
  start_event_id: string;
  /** The start scan's `created`. */
  opened_at: number;
}

/** What the tracker keeps of a customer, in one row (the store compares the cursor before it moves it). */
export interface TrackerState {
  /** How far in the commit order of the customer's events it read. */
  cursor: StreamPosition;
  /** When it started reading (at the head then): a gateway with no scan since is silent since then. */
  started: number;
  open_jobs: TrackedJob[];
  /** The newest scan's `created` per gateway. */
  last_scans: Record<string, number>;
}

/** The `data` of a `job.completed` message (times in ms, as the job analysis answers them). */
export interface CompletedJob {
  job_config_id: string;
  job_name: string;
  gateway_id: string;
  start_time: number;
  end_time: number;
  start_event_id: string;
  end_event_id: string;
}

/** What the tracker needs of a scan. */
export interface TrackedScan {
  id: string;
  created: number;
  gateway_id: string;
  scan_code: string;
}

/**
 * The state after the scans, in the order given (commit order), under the job configurations as
 * they are now: open jobs of configurations deleted, or of gateways a configuration no longer
 * names, are dropped; each end barcode that closes a job is one completed job.
 */
export function trackScans(
  state: Pick<TrackerState, 'open_jobs' | 'last_scans'>,
  configs: readonly JobConfig[],
  scans: readonly TrackedScan[],
): { open_jobs: TrackedJob[]; last_scans: Record<string, number>; completed: CompletedJob[] } {
  const key = (configId: string, gatewayId: string) => `${configId}\n${gatewayId}`;
  const open = new Map<string, OpenJob>();
  const live = new Set(configs.flatMap((config) => config.gateway_ids.map((gatewayId) => key(config.job_config_id, gatewayId))));
  for (const job of state.open_jobs) {
    const at = key(job.job_config_id, job.gateway_id);
    if (live.has(at)) open.set(at, { created: job.opened_at, id: job.start_event_id });
  }
  const lastScans = { ...state.last_scans };
  const completed: CompletedJob[] = [];
  for (const scan of scans) {
    lastScans[scan.gateway_id] = Math.max(lastScans[scan.gateway_id] ?? scan.created, scan.created);
    for (const config of configs) {
      if (!config.gateway_ids.includes(scan.gateway_id)) continue;
      const at = key(config.job_config_id, scan.gateway_id);
      const step = jobStep(open.get(at), config, scan.id, scan.created, scan.scan_code);
      if (step.open) open.set(at, step.open);
      else open.delete(at);
      if (step.closed) completed.push({ job_config_id: config.job_config_id, job_name: config.job_name, gateway_id: scan.gateway_id, ...step.closed });
    }
  }
  const openJobs = [...open].map(([at, job]) => {
    const [jobConfigId, gatewayId] = at.split('\n') as [string, string];
    return { job_config_id: jobConfigId, gateway_id: gatewayId, start_event_id: job.id, opened_at: job.created };
  });
  return { open_jobs: openJobs, last_scans: lastScans, completed };
}

/** The scan in an event's JSON as the events list writes it; undefined for telemetry, or a scan without a code or gateway. */
export function scanOf(json: string): TrackedScan | undefined {
  // Most events of a busy customer are telemetry: passed over without parsing.
  if (!json.includes('"scan_code":')) return undefined;
  const event = JSON.parse(json) as { id: string; type?: string; created: number; scan_code?: string | null; gateway_id?: string | null };
  if (event.type !== 'scan' || typeof event.scan_code !== 'string' || typeof event.gateway_id !== 'string') return undefined;
  return { id: event.id, created: event.created, gateway_id: event.gateway_id, scan_code: event.scan_code };
}
