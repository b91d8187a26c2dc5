import { fieldsToCheck, mergedFields, staleVersion } from '../../domain/job-configs.js';
import type { JobConfig, JobConfigFields, JobConfigRefusal, JobConfigRepository } from '../ports/index.js';
import { toJobConfig, type JobConfigRow } from '../shared/rows.js';
import { uniqueViolation, type Database, type Queryable } from './pool.js';

const COLUMNS = 'id, job_name, start_barcode, end_barcode, gateway_ids, version, created, last_updated';

const NAME_TAKEN: JobConfigRefusal = { refused: 'name-taken' };

/**
 * Job configurations of each customer and the per-customer revision that is the list's ETag.
 * Every write checks the gateways and raises the revision in the same transaction.
 */
export class PgJobConfigs implements JobConfigRepository {
  constructor(private readonly db: Database) {}

  /** One statement, so one snapshot: the revision always belongs to the list it comes with. */
  async list(customerId: string): Promise<{ revision: number; items: JobConfig[] }> {
    const { rows } = await this.db.query<JobConfigRow & { revision: number }>(
      `SELECT coalesce((SELECT revision FROM job_config_revisions WHERE customer_id = $1), 0) AS revision, j.*
       FROM (SELECT 1) AS one LEFT JOIN (SELECT ${COLUMNS} FROM job_configs WHERE customer_id = $1) AS j ON true
       ORDER BY j.created, j.id`,
      [customerId],
    );
    return { revision: rows[0]!.revision, items: rows.filter((row) => row.id !== null).map(toJobConfig) };
  }

  async byId(customerId: string, id: string): Promise<JobConfig | undefined> {
    const row = (await this.db.query<JobConfigRow>(`SELECT ${COLUMNS} FROM job_configs WHERE customer_id = $1 AND id = $2`, [customerId, id])).rows[0];
    return row && toJobConfig(row);
  }

  create(customerId: string, id: string, fields: JobConfigFields, now: number): Promise<JobConfig | JobConfigRefusal> {
    return this.write(async (client) => {
      const refusal = await check(client, customerId, id, fields);
      if (refusal) return refusal;
      const { rows } = await client.query<JobConfigRow>(
        `INSERT INTO job_configs (id, customer_id, job_name, start_barcode, end_barcode, gateway_ids, version, created, last_updated)
         VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $7) RETURNING ${COLUMNS}`,
        [id, customerId, fields.job_name, fields.start_barcode, fields.end_barcode, JSON.stringify(fields.gateway_ids), now],
      );
      await raiseRevision(client, customerId);
      return toJobConfig(rows[0]!);
    });
  }

  update(customerId: string, id: string, changes: Partial<JobConfigFields>, now: number, expectedVersion?: number): Promise<JobConfig | JobConfigRefusal> {
    return this.write(async (client) => {
      const row = (await client.query<JobConfigRow>(`SELECT ${COLUMNS} FROM job_configs WHERE customer_id = $1 AND id = $2 FOR UPDATE`, [customerId, id])).rows[0];
      if (!row) return { refused: 'missing' } as const;
      const current = toJobConfig(row);
      const stale = staleVersion(current, expectedVersion);
      if (stale) return stale;
      const fields = mergedFields(current, changes);
      const refusal = await check(client, customerId, id, fieldsToCheck(fields, changes));
      if (refusal) return refusal;
      const { rows } = await client.query<JobConfigRow>(
        `UPDATE job_configs SET job_name = $3, start_barcode = $4, end_barcode = $5, gateway_ids = $6, version = version + 1, last_updated = $7
         WHERE customer_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
        [customerId, id, fields.job_name, fields.start_barcode, fields.end_barcode, JSON.stringify(fields.gateway_ids), now],
      );
      await raiseRevision(client, customerId);
      return toJobConfig(rows[0]!);
    });
  }

  async delete(customerId: string, id: string): Promise<boolean> {
    return this.db.transaction(async (client) => {
      const deleted = (await client.query('DELETE FROM job_configs WHERE customer_id = $1 AND id = $2', [customerId, id])).rowCount === 1;
      if (deleted) await raiseRevision(client, customerId);
      return deleted;
    });
  }

  /** A write in a transaction; a name taken by a concurrent writer (the unique constraint) is a refusal too. */
  private write(work: (client: Queryable) => Promise<JobConfig | JobConfigRefusal>): Promise<JobConfig | JobConfigRefusal> {
    return this.db.transaction(work).catch((error: unknown) => {
      if (uniqueViolation(error) === 'job_configs_name') return NAME_TAKEN;
      throw error;
    });
  }
}

/** A name clash with another configuration, or the first gateway id that is not a live gateway of the customer. */
async function check(client: Queryable, customerId: string, id: string, fields: JobConfigFields): Promise<JobConfigRefusal | undefined> {
  const clash = await client.query('SELECT 1 FROM job_configs WHERE customer_id = $1 AND job_name = $2 AND id <> $3', [customerId, fields.job_name, id]);
  if (clash.rowCount) return NAME_TAKEN;
  if (fields.gateway_ids.length === 0) return undefined;
  const unknown = (
    await client.query<{ gateway_id: string }>(
      `SELECT t.gateway_id FROM unnest($2::text[]) WITH ORDINALITY AS t(gateway_id, n)
       WHERE NOT EXISTS (SELECT 1 FROM gateways WHERE customer_id = $1 AND deleted IS NULL AND id = t.gateway_id)
       ORDER BY t.n LIMIT 1`,
      [customerId, fields.gateway_ids],
    )
  ).rows[0];
  return unknown ? { refused: 'unknown-gateway', gateway_id: unknown.gateway_id } : undefined;
}

async function raiseRevision(client: Queryable, customerId: string): Promise<void> {
  await client.query(
    `INSERT INTO job_config_revisions (customer_id, revision) VALUES ($1, 1)
     ON CONFLICT (customer_id) DO UPDATE SET revision = job_config_revisions.revision + 1`,
    [customerId],
  );
}
