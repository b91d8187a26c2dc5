import type { AuditEntry } from '../../domain/audit.js';

/** A per-customer flag set by the operator. */
export interface Feature {
  feature: string;
  enabled: boolean;
  additional_properties?: Record<string, unknown>;
}

export interface FeatureRepository {
  list(customerId: string): Promise<Feature[]>;
  /** Sets the flag; properties undefined keeps the stored ones, null clears them. */
  set(customerId: string, feature: string, enabled: boolean, properties: Record<string, unknown> | null | undefined, now: number, audit?: AuditEntry): Promise<Feature>;
}
