import type { AuditAction, AuditEntry } from '../../domain/audit.js';
import type { ApiKeyRecord, AuditPage, Consent, JobConfig, RetentionDeletion, RetentionRecord, UserRecord } from '../ports/index.js';

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

/** An audit_log row (migrations sqlite 0009, postgres 0004), in its column order. */
export interface AuditRow {
  id: string;
  customer_id: string;
  time: number;
  action: string;
  actor_type: string;
  actor_id: string;
  actor_email: string | null;
  target_type: string | null;
  target_id: string | null;
  ip: string | null;
  details: string | null;
}

/** The columns of audit_log, in the order of AuditRow and of auditRowValues. */
export const AUDIT_COLUMNS = ['id', 'customer_id', 'time', 'action', 'actor_type', 'actor_id', 'actor_email', 'target_type', 'target_id', 'ip', 'details'] as const;

/** The entry's values in AUDIT_COLUMNS order. */
export function auditRowValues(entry: AuditEntry): (string | number | null)[] {
  return [
    entry.id,
    entry.customerId,
    entry.time,
    entry.action,
    entry.actor.type,
    entry.actor.id,
    entry.actor.email ?? null,
    entry.target?.type ?? null,
    entry.target?.id ?? null,
    entry.ip ?? null,
    entry.details === undefined ? null : JSON.stringify(entry.details),
  ];
}

export function toAuditEntry(row: AuditRow): AuditEntry {
  return {
    id: row.id,
    customerId: row.customer_id,
    time: row.time,
    action: row.action as AuditAction,
    actor: { type: row.actor_type as AuditEntry['actor']['type'], id: row.actor_id, ...(row.actor_email !== null ? { email: row.actor_email } : {}) },
    ...(row.target_type !== null && row.target_id !== null ? { target: { type: row.target_type, id: row.target_id } } : {}),
    ...(row.ip !== null ? { ip: row.ip } : {}),
    ...(row.details !== null ? { details: JSON.parse(row.details) as Record<string, unknown> } : {}),
  };
}

/** A page of `limit` entries from up to `limit + 1` rows (the extra one says more follow). */
export function auditPageOf(rows: AuditRow[], limit: number): AuditPage {
  return { entries: rows.slice(0, limit).map(toAuditEntry), more: rows.length > limit };
}

export interface ApiKeyRow extends Omit<ApiKeyRecord, 'permissions'> {
  permissions: string;
}

export function toApiKeyRecord(row: ApiKeyRow): ApiKeyRecord {
  return { ...row, permissions: JSON.parse(row.permissions) as string[] };
}

/** The columns of a retention row (migrations sqlite 0012, postgres 0007) that make a RetentionRecord. */
export const RETENTION_COLUMNS =
  'events_days, deletion_started, deletion_finished, deletion_cutoff, deletion_deleted, deletion_batches, deletion_longest_batch_ms';

export interface RetentionRow {
  events_days: number | null;
  deletion_started: number | null;
  deletion_finished: number | null;
  deletion_cutoff: number | null;
  deletion_deleted: number | null;
  deletion_batches: number | null;
  deletion_longest_batch_ms: number | null;
}

/** The record of a row; a customer without a row keeps its events for ever and has deleted nothing. */
export function toRetentionRecord(row: RetentionRow | undefined): RetentionRecord {
  if (!row) return { events_days: null, last_deletion: null };
  const last_deletion: RetentionDeletion | null =
    row.deletion_finished === null
      ? null
      : {
          started: row.deletion_started!,
          finished: row.deletion_finished,
          cutoff: row.deletion_cutoff!,
          deleted: row.deletion_deleted!,
          batches: row.deletion_batches!,
          longest_batch_ms: row.deletion_longest_batch_ms!,
        };
  return { events_days: row.events_days, last_deletion };
}

/** The values of a finished deletion in the order of the deletion_* columns. */
export function retentionDeletionValues(deletion: RetentionDeletion): number[] {
  return [deletion.started, deletion.finished, deletion.cutoff, deletion.deleted, deletion.batches, deletion.longest_batch_ms];
}
