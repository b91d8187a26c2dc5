import { JobScanner, type GatewayJobs, type JobBarcodes, type TimeRange } from '../../domain/job-analysis.js';
import type { Db } from './open.js';
import type { AnalysisRequest } from '../ports/index.js';

const SELECT_SCANS = `
  SELECT id, created, scan_code FROM events
  WHERE gateway_id = @gateway AND created >= @from AND created < @to AND type = 'scan'`;

/**
 * Per gateway, the scans in range whose code begins with either prefix, in (created, id) order, from
 * the covering index events_gateway_created alone. "Begins with P" is P <= code < prefixEnd(P):
 * cheaper than substr and, unlike LIKE, case-sensitive. No customer_id condition, which would read
 * each row: gateway ids are deployment-wide, and the configuration's gateways are the customer's.
 */
export const JOB_MARKER_QUERY = `${SELECT_SCANS}
    AND ((scan_code >= @start AND scan_code < @startEnd) OR (scan_code >= @end AND scan_code < @endEnd))
  ORDER BY created, id`;

/** The same for a prefix without an end (it consists of U+10FFFF only): compare the beginning. */
export const JOB_MARKER_QUERY_SUBSTR = `${SELECT_SCANS}
    AND (substr(scan_code, 1, length(@start)) = @start OR substr(scan_code, 1, length(@end)) = @end)
  ORDER BY created, id`;

/**
 * The least string above every string that begins with `prefix`: its last code point raised by
 * one (skipping the surrogate block; a trailing U+10FFFF is dropped and the one before raised).
 * Undefined when there is none.
 */
export function prefixEnd(prefix: string): string | undefined {
  const points = Array.from(prefix, (c) => c.codePointAt(0)!);
  while (points.length > 0) {
    const last = points.pop()!;
    if (last < 0x10ffff) {
      points.push(last + 1 === 0xd800 ? 0xe000 : last + 1);
      return String.fromCodePoint(...points);
    }
  }
  return undefined;
}

/** Runs the analysis against the database in one read transaction, so all gateways see one snapshot. */
export function analyzeStoredJobs(db: Db, request: AnalysisRequest): GatewayJobs[] {
  const { barcodes, range } = request;
  const startEnd = prefixEnd(barcodes.start_barcode);
  const endEnd = prefixEnd(barcodes.end_barcode);
  const byRange = startEnd !== undefined && endEnd !== undefined;
  const markers = db.prepare(byRange ? JOB_MARKER_QUERY : JOB_MARKER_QUERY_SUBSTR).raw();
  const parameters = {
    from: range.start_time,
    to: range.end_time,
    start: barcodes.start_barcode,
    end: barcodes.end_barcode,
    ...(byRange ? { startEnd, endEnd } : {}),
  };
  return db.transaction(() =>
    request.gatewayIds.map((gateway) => {
      const scanner = new JobScanner(barcodes);
      const rows = markers.all({ ...parameters, gateway }) as [string, number, string][];
      for (const [id, created, code] of rows) scanner.feed(id, created, code);
      return { gateway_id: gateway, jobs: scanner.jobs };
    }),
  )();
}

/**
 * The analysis as the UTF-8 JSON body `{"results":[...]}`: serialized where it was computed, so
 * the thread that serves HTTP neither copies nor stringifies tens of thousands of jobs.
 */
export function analyzeStoredJobsToJson(db: Db, request: AnalysisRequest): Buffer {
  return Buffer.from(JSON.stringify({ results: analyzeStoredJobs(db, request) }));
}
