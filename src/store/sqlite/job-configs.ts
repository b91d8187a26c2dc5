import { fieldsToCheck, mergedFields, staleVersion } from '../../domain/job-configs.js';
import type { JobConfig, JobConfigFields, JobConfigRefusal, JobConfigRepository } from '../ports/index.js';
import { toJobConfig, type JobConfigRow } from '../shared/rows.js';
import type { Db } from './open.js';

/**
 * Job configurations of each customer and the per-customer revision that is the list's ETag.
 * Every write checks the gateways and raises the revision in the same transaction.
 */
export class SqliteJobConfigs implements JobConfigRepository {
  constructor(private readonly db: Db) {}

  /** One read transaction: the revision is the ETag of exactly this list. */
  async list(customerId: string): Promise<{ revision: number; items: JobConfig[] }> {
    return this.db.transaction(() => {
      const revision = this.revision(customerId);
      const rows = this.db.prepare('SELECT * FROM job_configs WHERE customer_id = ? ORDER BY created, id').all(customerId) as JobConfigRow[];
      return { revision, items: rows.map(toJobConfig) };
    })();
  }

  async byId(customerId: string, id: string): Promise<JobConfig | undefined> {
    return this.byIdNow(customerId, id);
  }

  async create(customerId: string, id: string, fields: JobConfigFields, now: number): Promise<JobConfig | JobConfigRefusal> {
    return this.db
      .transaction(() => {
        const refusal = this.check(customerId, id, fields);
        if (refusal) return refusal;
        this.db
          .prepare(
            `INSERT INTO job_configs (id, customer_id, job_name, start_barcode, end_barcode, gateway_ids, version, created, last_updated)
             VALUES (@id, @customerId, @job_name, @start_barcode, @end_barcode, @gateway_ids, 1, @now, @now)`,
          )
          .run({ ...fields, id, customerId, gateway_ids: JSON.stringify(fields.gateway_ids), now });
        this.raiseRevision(customerId);
        return this.byIdNow(customerId, id)!;
      })
      .immediate();
  }

  /** Changes the given fields and raises `version`; `expectedVersion` (from If-Match) must be current when given. */
  async update(customerId: string, id: string, changes: Partial<JobConfigFields>, now: number, expectedVersion?: number): Promise<JobConfig | JobConfigRefusal> {
    return this.db
      .transaction(() => {
        const current = this.byIdNow(customerId, id);
        if (!current) return { refused: 'missing' } as const;
        const stale = staleVersion(current, expectedVersion);
        if (stale) return stale;
        const fields = mergedFields(current, changes);
        const refusal = this.check(customerId, id, fieldsToCheck(fields, changes));
        if (refusal) return refusal;
        this.db
          .prepare(
            `UPDATE job_configs SET job_name = @job_name, start_barcode = @start_barcode, end_barcode = @end_barcode,
               gateway_ids = @gateway_ids, version = version + 1, last_updated = @now
             WHERE customer_id = @customerId AND id = @id`,
          )
          .run({ ...fields, gateway_ids: JSON.stringify(fields.gateway_ids), customerId, id, now });
        this.raiseRevision(customerId);
        return this.byIdNow(customerId, id)!;
      })
      .immediate();
  }

  /** Deletes the configuration; false when it does not exist. */
  async delete(customerId: string, id: string): Promise<boolean> {
    return this.db
      .transaction(() => {
        const deleted = this.db.prepare('DELETE FROM job_configs WHERE customer_id = ? AND id = ?').run(customerId, id).changes === 1;
        if (deleted) this.raiseRevision(customerId);
        return deleted;
      })
      .immediate();
  }

  private byIdNow(customerId: string, id: string): JobConfig | undefined {
    const row = this.db.prepare('SELECT * FROM job_configs WHERE customer_id = ? AND id = ?').get(customerId, id) as
      | JobConfigRow
      | undefined;
    return row && toJobConfig(row);
  }

  /** The list's revision: 0 before the first write, then raised by every create, update and delete. */
  private revision(customerId: string): number {
    return (this.db.prepare('SELECT revision FROM job_config_revisions WHERE customer_id = ?').pluck().get(customerId) as number | undefined) ?? 0;
  }

  /** A name clash with another configuration, or the first gateway id that is not a live gateway of the customer. */
  private check(customerId: string, id: string, fields: JobConfigFields): JobConfigRefusal | undefined {
    const clash = this.db
      .prepare('SELECT 1 FROM job_configs WHERE customer_id = ? AND job_name = ? AND id <> ?')
      .get(customerId, fields.job_name, id);
    if (clash) return { refused: 'name-taken' };
    const unknown = this.db
      .prepare(
        `SELECT value FROM json_each(?)
         WHERE value NOT IN (SELECT id FROM gateways WHERE customer_id = ? AND deleted IS NULL)
         ORDER BY key LIMIT 1`,
      )
      .pluck()
      .get(JSON.stringify(fields.gateway_ids), customerId) as string | undefined;
    if (unknown !== undefined) return { refused: 'unknown-gateway', gateway_id: unknown };
    return undefined;
  }

  private raiseRevision(customerId: string): void {
    this.db
      .prepare(
        `INSERT INTO job_config_revisions (customer_id, revision) VALUES (?, 1)
         ON CONFLICT (customer_id) DO UPDATE SET revision = revision + 1`,
      )
      .run(customerId);
  }
}
