import type { AuditEntry } from '../../domain/audit.js';
import type { Feature, FeatureRepository } from '../ports/index.js';
import { audited } from './audit.js';
import type { Database } from './pool.js';

/** Per-customer feature flags, set by the operator. */
export class PgFeatures implements FeatureRepository {
  constructor(private readonly db: Database) {}

  async list(customerId: string): Promise<Feature[]> {
    const { rows } = await this.db.query<{ feature: string; enabled: boolean; additional_properties: string | null }>(
      'SELECT feature, enabled, additional_properties FROM features WHERE customer_id = $1 ORDER BY feature',
      [customerId],
    );
    return rows.map(toFeature);
  }

  /** Sets the flag; properties undefined keeps the stored ones, null clears them. */
  async set(
    customerId: string,
    feature: string,
    enabled: boolean,
    properties: Record<string, unknown> | null | undefined,
    now: number,
    audit?: AuditEntry,
  ): Promise<Feature> {
    const { rows } = await audited(this.db, (client) => client.query<{ feature: string; enabled: boolean; additional_properties: string | null }>(
      `INSERT INTO features (customer_id, feature, enabled, additional_properties, last_updated)
       VALUES ($1, $2, $3, $4, $6)
       ON CONFLICT (customer_id, feature) DO UPDATE SET
         enabled = excluded.enabled,
         additional_properties = CASE WHEN $5 THEN features.additional_properties ELSE excluded.additional_properties END,
         last_updated = excluded.last_updated
       RETURNING feature, enabled, additional_properties`,
      [customerId, feature, enabled, properties ? JSON.stringify(properties) : null, properties === undefined, now],
    ), () => audit);
    return toFeature(rows[0]!);
  }
}

function toFeature(row: { feature: string; enabled: boolean; additional_properties: string | null }): Feature {
  return {
    feature: row.feature,
    enabled: row.enabled,
    ...(row.additional_properties ? { additional_properties: JSON.parse(row.additional_properties) as Record<string, unknown> } : {}),
  };
}
