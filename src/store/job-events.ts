import { JobScanner, type GatewayJobs, type JobBarcodes, type TimeRange } from '../domain/job-analysis.js';
import type { Db } from './open.js';

/** Everything an analysis needs, as plain data (it crosses a worker boundary). */
export interface AnalysisRequest {
  gatewayIds: string[];
  barcodes: JobBarcodes;
  range: TimeRange;
}

/**
 * Per gateway, the scans in the range whose code begins with either prefix, in (created, id)
 * order, from the covering index events_gateway_scans (gateway_id, created, id, scan_code) WHERE
 * type = 'scan': no table row is read. Other scans cannot change the outcome, so SQLite drops
 * them. `substr` compares case-sensitively (LIKE would not). There is no customer_id condition
 * (it would cost a row lookup per event): gateway ids are deployment-wide UUIDs, the job
 * configuration's gateways were checked to be the customer's, and ingest takes an event's
 * gateway from the certificate that sent it.
 */
export const JOB_MARKER_QUERY = `
  SELECT id, created, scan_code FROM events
  WHERE gateway_id = @gateway AND created >= @from AND created < @to AND type = 'scan'
    AND (substr(scan_code, 1, length(@start)) = @start OR substr(scan_code, 1, length(@end)) = @end)
  ORDER BY created, id`;

/** Runs the analysis against the database in one read transaction, so all gateways see one snapshot. */
export function analyzeStoredJobs(db: Db, request: AnalysisRequest): GatewayJobs[] {
  const markers = db.prepare(JOB_MARKER_QUERY).raw();
  const { barcodes, range } = request;
  return db.transaction(() =>
    request.gatewayIds.map((gateway) => {
      const scanner = new JobScanner(barcodes);
      const rows = markers.all({
        gateway,
        from: range.start_time,
        to: range.end_time,
        start: barcodes.start_barcode,
        end: barcodes.end_barcode,
      }) as [string, number, string][];
      for (const [id, created, code] of rows) scanner.feed(id, created, code);
      return { gateway_id: gateway, jobs: scanner.jobs };
    }),
  )();
}
