import { DEVICE_ROW_COLUMNS } from '../../domain/devices.js';
import { STORED_EVENT_COLUMNS } from '../../domain/events.js';
import { TRACKER_COLUMNS } from './alert-rows.js';
import { DELIVERY_COLUMNS, WEBHOOK_COLUMNS } from './webhook-rows.js';

/**
 * What `scanhub operator migrate` copies from a SQLite deployment into PostgreSQL: every table
 * both stores keep, under the same names and columns (the PostgreSQL schema is SQLite's
 * migrations in one step), parents before the tables whose foreign keys name them.
 */
export interface CopiedTable {
  name: string;
  /** The columns copied, in the order the rows carry their values. */
  columns: readonly string[];
  /** A column the database numbers (seq): its values are kept and the counter moved past them. */
  numbered?: string;
  /** The order SQLite's rows are read in, for a table WITHOUT ROWID (its primary key); otherwise rowid order. */
  orderBy?: string;
}

/**
 * A row's values in its table's column order, dialect-neutral: text, numbers (integers are safe
 * integers), booleans, bytes, null.
 */
export type CopiedValue = string | number | boolean | Uint8Array | null;
export type CopiedRow = CopiedValue[];

export const COPIED_TABLES: readonly CopiedTable[] = [
  { name: 'customers', columns: ['id', 'created'] },
  {
    name: 'users',
    columns: ['id', 'customer_id', 'email', 'first_name', 'last_name', 'language', 'roles', 'password_hash', 'consent_general_terms', 'consent_privacy_policy', 'created', 'last_updated', 'session_version'],
  },
  { name: 'invitations', columns: ['token_hash', 'user_id', 'created', 'expires_at', 'used_at', 'kind'] },
  { name: 'login_failures', columns: ['lockout_key', 'at'] },
  { name: 'audit_log', columns: ['id', 'customer_id', 'time', 'action', 'actor_type', 'actor_id', 'actor_email', 'target_type', 'target_id', 'ip', 'details'] },
  { name: 'api_keys', columns: ['id', 'customer_id', 'name', 'key_hash', 'permissions', 'created', 'created_by', 'expires_at', 'last_used', 'revoked'] },
  { name: 'features', columns: ['customer_id', 'feature', 'enabled', 'additional_properties', 'last_updated'] },
  {
    name: 'gateways',
    columns: ['id', 'customer_id', 'name', 'usecase', 'station', 'type', 'model', 'manufacturer', 'firmware', 'version', 'provisioning_prepared', 'last_message', 'deleted', 'created', 'last_updated', 'certificate_revoked', 'reprovisioned'],
  },
  { name: 'gateway_certificates', columns: ['serial', 'gateway_id', 'common_name', 'cert_pem', 'sealed_key', 'created', 'not_after', 'delivered_at', 'revoked', 'replaces'] },
  { name: 'provisioning_tokens', columns: ['token_hash', 'gateway_id', 'certificate_serial', 'created', 'expires_at', 'used_at'] },
  { name: 'events', columns: STORED_EVENT_COLUMNS },
  { name: 'devices', columns: DEVICE_ROW_COLUMNS, orderBy: 'customer_id, device_id' },
  {
    name: 'commands',
    columns: ['seq', 'id', 'customer_id', 'gateway_id', 'device_id', 'name', 'parameters', 'status', 'created', 'last_updated', 'expires_at', 'delivered_at', 'completed_at', 'details', 'attempts'],
    numbered: 'seq',
  },
  { name: 'command_subscriptions', columns: ['gateway_id', 'qos', 'created'] },
  {
    name: 'export_tasks',
    columns: ['id', 'customer_id', 'requested_by', 'start_time', 'end_time', 'status', 'requested', 'completed', 'rows', 'file', 'failure', 'cells', 'lease_owner', 'lease_until', 'attempts'],
  },
  {
    name: 'retention',
    columns: ['customer_id', 'events_days', 'updated', 'deletion_started', 'deletion_finished', 'deletion_cutoff', 'deletion_deleted', 'deletion_batches', 'deletion_longest_batch_ms'],
  },
  { name: 'job_configs', columns: ['id', 'customer_id', 'job_name', 'start_barcode', 'end_barcode', 'gateway_ids', 'version', 'created', 'last_updated'] },
  { name: 'job_config_revisions', columns: ['customer_id', 'revision'] },
  {
    name: 'assets',
    columns: ['seq', 'id', 'asset_type', 'asset_version', 'file_name', 'file_size', 'file_sha256', 'eula_version', 'eula_text', 'eula_checksum', 'registered'],
    numbered: 'seq',
  },
  {
    name: 'asset_agreements',
    columns: ['seq', 'customer_id', 'user_id', 'agreed_by', 'asset_id', 'asset_type', 'asset_version', 'eula_version', 'eula_checksum', 'agreed_at'],
    numbered: 'seq',
  },
  { name: 'dead_letters', columns: ['seq', 'gateway_id', 'customer_id', 'received', 'quarantined', 'reason', 'payload'], numbered: 'seq' },
  // Cursors and batch ranges are SQLite positions: the deliverer starts a webhook whose cursor is
  // not a position of its store at the head (src/webhooks/webhook-worker.ts).
  { name: 'webhooks', columns: WEBHOOK_COLUMNS },
  { name: 'webhook_deliveries', columns: DELIVERY_COLUMNS, numbered: 'seq' },
  { name: 'alert_rules', columns: ['id', 'customer_id', 'kind', 'parameters', 'created'] },
  { name: 'alerts', columns: ['id', 'customer_id', 'rule_id', 'kind', 'subject_type', 'subject_id', 'state', 'opened', 'resolved', 'details'] },
  // A tracker's cursor is a SQLite position: the tracker goes on from PostgreSQL's head, keeping its open jobs (src/alerts/job-tracker.ts).
  { name: 'alert_trackers', columns: TRACKER_COLUMNS },
  { name: 'gateway_connectivity', columns: ['gateway_id', 'customer_id', 'connectivity', 'changed_at'] },
];

/**
 * Tables of SQLite's own bookkeeping that migrate leaves behind: PostgreSQL keeps its own kind
 * (event_seq_mark keeps SQLite's event numbers above deleted ones; PostgreSQL numbers events by
 * transaction, migrations 0013 and 0008).
 */
export const SQLITE_ONLY_TABLES: readonly string[] = ['event_seq_mark'];
