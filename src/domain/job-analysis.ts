/**
 * Job analysis (docs/jobs-and-assets.md "Job analysis"): per gateway, the scan events
 * in (created, id) order are read as a sequence of start and end barcodes; a start opens a job
 * (replacing one that never ended), an end closes the open job into one result.
 */

/** The barcode prefixes of a job configuration. */
export interface JobBarcodes {
  start_barcode: string;
  end_barcode: string;
}

/** What the analysis needs of an event. */
export interface AnalysisEvent {
  id: string;
  type: string;
  created: number;
  scan_code: string | null;
  gateway_id: string | null;
}

/** One finished job, as the analysis answers it. */
export interface Job {
  start_time: number;
  end_time: number;
  start_event_id: string;
  end_event_id: string;
}

export interface GatewayJobs {
  gateway_id: string;
  jobs: Job[];
}

/** A half-open time range: `start_time <= created < end_time`. */
export interface TimeRange {
  start_time: number;
  end_time: number;
}

export type Marker = 'start' | 'end';

/**
 * Whether a scanned code starts or ends a job. When it begins with both prefixes the longer one
 * decides; when the prefixes are equal the code ends an open job and otherwise starts one.
 */
export function classifyCode(code: string, barcodes: JobBarcodes, jobOpen: boolean): Marker | undefined {
  const { start_barcode: start, end_barcode: end } = barcodes;
  const isStart = code.startsWith(start);
  const isEnd = code.startsWith(end);
  if (isStart && isEnd) {
    if (start.length !== end.length) return start.length > end.length ? 'start' : 'end';
    return jobOpen ? 'end' : 'start';
  }
  if (isEnd) return 'end';
  if (isStart) return 'start';
  return undefined;
}

/** The job open on one gateway: its start scan. */
export interface OpenJob {
  created: number;
  id: string;
}

/**
 * One scan read on one gateway (the per-gateway step of the analysis, also the job tracker's,
 * docs/alerts.md "Jobs"): the job open after it, and the job it closed, if any. Scans that are
 * neither a start nor an end leave the open job as it was.
 */
export function jobStep(open: OpenJob | undefined, barcodes: JobBarcodes, id: string, created: number, code: string): { open: OpenJob | undefined; closed?: Job } {
  const marker = classifyCode(code, barcodes, open !== undefined);
  if (marker === 'start') return { open: { created, id } };
  if (marker === 'end' && open) return { open: undefined, closed: { start_time: open.created, end_time: created, start_event_id: open.id, end_event_id: id } };
  return { open };
}

/**
 * The state machine over one gateway's scans, fed in (created, id) order. Scans that are neither
 * a start nor an end change nothing, so a caller may feed only the scans that match a prefix.
 */
export class JobScanner {
  readonly jobs: Job[] = [];
  private open: OpenJob | undefined;

  constructor(private readonly barcodes: JobBarcodes) {}

  feed(id: string, created: number, code: string): void {
    const step = jobStep(this.open, this.barcodes, id, created, code);
    this.open = step.open;
    if (step.closed) this.jobs.push(step.closed);
  }
}

/** (created, id) order, ids compared as SQLite compares TEXT (by code unit; ids are ASCII UUIDs). */
export function compareEvents(a: { created: number; id: string }, b: { created: number; id: string }): number {
  if (a.created !== b.created) return a.created - b.created;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * The whole analysis on plain data: one entry per gateway in `gatewayIds` order (also when it has
 * no events), jobs oldest first. Events of other gateways, telemetry and events outside the range
 * are ignored; the input may be in any order.
 */
export function analyzeJobs(
  barcodes: JobBarcodes,
  gatewayIds: readonly string[],
  range: TimeRange,
  events: readonly AnalysisEvent[],
): GatewayJobs[] {
  const byGateway = new Map<string, AnalysisEvent[]>(gatewayIds.map((id) => [id, []]));
  for (const event of events) {
    if (event.type !== 'scan' || event.scan_code === null || event.gateway_id === null) continue;
    if (event.created < range.start_time || event.created >= range.end_time) continue;
    byGateway.get(event.gateway_id)?.push(event);
  }
  return gatewayIds.map((gatewayId) => {
    const scanner = new JobScanner(barcodes);
    for (const event of byGateway.get(gatewayId)!.sort(compareEvents)) scanner.feed(event.id, event.created, event.scan_code!);
    return { gateway_id: gatewayId, jobs: scanner.jobs };
  });
}
