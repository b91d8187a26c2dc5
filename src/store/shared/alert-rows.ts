import type { AlertRecord, AlertRule, AlertState, TrackerState } from '../ports/index.js';

/** The alert_rules and alerts rows as both stores keep them (objects as JSON text). */

export interface AlertRuleRow {
  id: string;
  customer_id: string;
  kind: string;
  parameters: string;
  created: number;
}

export interface AlertRow {
  id: string;
  customer_id: string;
  rule_id: string;
  kind: string;
  subject_type: string;
  subject_id: string;
  state: string;
  opened: number;
  resolved: number | null;
  details: string;
}

export const toAlertRule = (row: AlertRuleRow): AlertRule => ({ ...row, parameters: JSON.parse(row.parameters) as Record<string, unknown> });

export function toAlert(row: AlertRow): AlertRecord {
  return {
    id: row.id,
    customer_id: row.customer_id,
    rule_id: row.rule_id,
    kind: row.kind,
    subject: { type: row.subject_type, id: row.subject_id },
    state: row.state as AlertState,
    opened: row.opened,
    resolved: row.resolved,
    details: JSON.parse(row.details) as Record<string, unknown>,
  };
}

export function alertValues(alert: AlertRecord) {
  return {
    id: alert.id,
    customer_id: alert.customer_id,
    rule_id: alert.rule_id,
    kind: alert.kind,
    subject_type: alert.subject.type,
    subject_id: alert.subject.id,
    state: alert.state,
    opened: alert.opened,
    resolved: alert.resolved,
    details: JSON.stringify(alert.details),
  };
}

/** The event type of webhooks that take a message of this alert state. */
export const alertEventType = (state: AlertState) => (state === 'OPEN' ? 'alert.opened' : 'alert.resolved');

/** The alert_trackers row (migrations: SQLite 0021, PostgreSQL 0016): the state's parts as JSON text. */
export interface TrackerRow {
  customer_id: string;
  cursor: string;
  started: number;
  open_jobs: string;
  last_scans: string;
}

export const TRACKER_COLUMNS = ['customer_id', 'cursor', 'started', 'open_jobs', 'last_scans'] as const;

export const toTracker = (row: TrackerRow): TrackerState => ({
  cursor: JSON.parse(row.cursor) as TrackerState['cursor'],
  started: Number(row.started),
  open_jobs: JSON.parse(row.open_jobs) as TrackerState['open_jobs'],
  last_scans: JSON.parse(row.last_scans) as TrackerState['last_scans'],
});

export const trackerValues = (customerId: string, state: TrackerState): TrackerRow => ({
  customer_id: customerId,
  cursor: JSON.stringify(state.cursor),
  started: state.started,
  open_jobs: JSON.stringify(state.open_jobs),
  last_scans: JSON.stringify(state.last_scans),
});
