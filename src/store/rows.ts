import type { ApiKeyRecord, Consent, JobConfig, UserRecord } from './ports.js';

/**
 * Rows as both stores keep them (lists and consents as JSON text) and the records they make: one
 * mapping, so that the two stores cannot drift apart.
 */

export interface UserRow extends Omit<UserRecord, 'roles' | 'consent_general_terms' | 'consent_privacy_policy'> {
  roles: string;
  consent_general_terms: string | null;
  consent_privacy_policy: string | null;
}

export function toUserRecord(row: UserRow): UserRecord {
  return {
    ...row,
    roles: JSON.parse(row.roles) as string[],
    consent_general_terms: row.consent_general_terms ? (JSON.parse(row.consent_general_terms) as Consent) : null,
    consent_privacy_policy: row.consent_privacy_policy ? (JSON.parse(row.consent_privacy_policy) as Consent) : null,
  };
}

export interface JobConfigRow {
  id: string;
  job_name: string;
  start_barcode: string;
  end_barcode: string;
  gateway_ids: string;
  version: number;
  created: number;
  last_updated: number;
}

export function toJobConfig(row: JobConfigRow): JobConfig {
  return {
    job_config_id: row.id,
    job_name: row.job_name,
    created: row.created,
    last_updated: row.last_updated,
    start_barcode: row.start_barcode,
    end_barcode: row.end_barcode,
    gateway_ids: JSON.parse(row.gateway_ids) as string[],
    class: 'jobconfig',
    version: row.version,
  };
}

export interface ApiKeyRow extends Omit<ApiKeyRecord, 'permissions'> {
  permissions: string;
}

export function toApiKeyRecord(row: ApiKeyRow): ApiKeyRecord {
  return { ...row, permissions: JSON.parse(row.permissions) as string[] };
}
