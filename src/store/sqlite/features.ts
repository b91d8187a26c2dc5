import type { AuditEntry } from '../../domain/audit.js';
import type { Feature, FeatureRepository } from '../ports/index.js';
import { audited } from './audit.js';
import type { Db } from './open.js';

/** Per-customer feature flags, set by the operator. */
export class SqliteFeatures implements FeatureRepository {
  constructor(private readonly db: Db) {}

  async list(customerId: string): Promise<Feature[]> {
    return this.listNow(customerId);
  }

  async set(customerId: string, feature: string, enabled: boolean, properties: Record<string, unknown> | null | undefined, now: number, audit?: AuditEntry): Promise<Feature> {
    return audited(this.db, () => this.setNow(customerId, feature, enabled, properties, now), () => audit);
  }

  private listNow(customerId: string): Feature[] {
    const rows = this.db
      .prepare('SELECT feature, enabled, additional_properties FROM features WHERE customer_id = ? ORDER BY feature')
      .all(customerId) as { feature: string; enabled: number; additional_properties: string | null }[];
    return rows.map((row) => ({
      feature: row.feature,
      enabled: row.enabled === 1,
      ...(row.additional_properties ? { additional_properties: JSON.parse(row.additional_properties) } : {}),
    }));
  }

  private setNow(customerId: string, feature: string, enabled: boolean, properties: Record<string, unknown> | null | undefined, now: number): Feature {
    this.db
      .prepare(
        `INSERT INTO features (customer_id, feature, enabled, additional_properties, last_updated)
         VALUES (@customerId, @feature, @enabled, @properties, @now)
         ON CONFLICT (customer_id, feature) DO UPDATE SET
           enabled = excluded.enabled,
           additional_properties = CASE WHEN @keep THEN additional_properties ELSE excluded.additional_properties END,
           last_updated = excluded.last_updated`,
      )
      .run({
        customerId,
        feature,
        enabled: enabled ? 1 : 0,
        properties: properties ? JSON.stringify(properties) : null,
        keep: properties === undefined ? 1 : 0,
        now,
      });
    return this.listNow(customerId).find((f) => f.feature === feature)!;
  }
}
