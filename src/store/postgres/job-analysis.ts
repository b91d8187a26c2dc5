import { JobScanner, type GatewayJobs } from '../../domain/job-analysis.js';
import type { AnalysisRequest, JobAnalysisRepository } from '../ports/index.js';
import { SHORT_CODE_BYTES } from './migrations/0001_foundation.js';
import type { Database } from './pool.js';

/**
 * Per gateway, the scans in range whose code begins with either prefix, in (created, id) order.
 * Codes up to SHORT_CODE_BYTES come from the covering index events_gateway_scans alone; longer
 * ones from their own small index. starts_with is case-sensitive, as SQLite's range is.
 */
const MARKERS_SQL = `SELECT id, created, scan_code FROM events
  WHERE gateway_id = $1 AND created >= $2 AND created < $3 AND type = 'scan' AND octet_length(scan_code) <= ${SHORT_CODE_BYTES}
    AND (starts_with(scan_code, $4) OR starts_with(scan_code, $5))
  UNION ALL
  SELECT id, created, scan_code FROM events
  WHERE gateway_id = $1 AND created >= $2 AND created < $3 AND type = 'scan' AND octet_length(scan_code) > ${SHORT_CODE_BYTES}
    AND (starts_with(scan_code, $4) OR starts_with(scan_code, $5))
  ORDER BY created, id`;

/** Job analysis over PostgreSQL: every gateway read in one REPEATABLE READ snapshot. */
export class PgJobAnalysis implements JobAnalysisRepository {
  constructor(private readonly db: Database) {}

  async analyze(request: AnalysisRequest): Promise<Buffer> {
    return Buffer.from(JSON.stringify({ results: await this.analyzeToObjects(request) }));
  }

  analyzeToObjects(request: AnalysisRequest): Promise<GatewayJobs[]> {
    const { barcodes, range } = request;
    return this.db.transaction(
      async (client) => {
        const results: GatewayJobs[] = [];
        for (const gateway of request.gatewayIds) {
          const scanner = new JobScanner(barcodes);
          const { rows } = await client.query<{ id: string; created: number; scan_code: string }>(MARKERS_SQL, [
            gateway,
            range.start_time,
            range.end_time,
            barcodes.start_barcode,
            barcodes.end_barcode,
          ]);
          for (const { id, created, scan_code } of rows) scanner.feed(id, created, scan_code);
          results.push({ gateway_id: gateway, jobs: scanner.jobs });
        }
        return results;
      },
      { isolation: 'repeatable read', readOnly: true },
    );
  }
}
