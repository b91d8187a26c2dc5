import type { AuditEntry } from '../../domain/audit.js';
import { CONNECTIVITY_MESSAGE_TYPE, JOB_COMPLETED_MESSAGE_TYPE } from '../../domain/alerts.js';
import type { StreamPosition } from '../../domain/stream-cursor.js';
import type { AlertRecord, AlertRepository, AlertRule, AlertState, AuditOf, TrackerState } from '../ports/index.js';
import {
  alertEventType,
  alertValues,
  toAlert,
  toAlertRule,
  toTracker,
  trackerValues,
  type AlertRow,
  type AlertRuleRow,
  type TrackerRow,
} from '../shared/alert-rows.js';
import { takingType } from '../shared/webhook-messages.js';
import { audited } from './audit.js';
import type { Db } from './open.js';
import { queueMessages } from './webhook-messages.js';

/** The alert_rules and alerts tables (migration 0020). */
export class SqliteAlerts implements AlertRepository {
  constructor(private readonly db: Db) {}

  async createRule(rule: AlertRule, audit?: AuditEntry): Promise<void> {
    audited(
      this.db,
      () => this.db.prepare('INSERT INTO alert_rules (id, customer_id, kind, parameters, created) VALUES (?, ?, ?, ?, ?)').run(rule.id, rule.customer_id, rule.kind, JSON.stringify(rule.parameters), rule.created),
      () => audit,
    );
  }

  async rules(customerId: string): Promise<AlertRule[]> {
    return this.db.prepare<[string], AlertRuleRow>('SELECT * FROM alert_rules WHERE customer_id = ? ORDER BY created, id').all(customerId).map(toAlertRule);
  }

  async allRules(): Promise<AlertRule[]> {
    return this.db.prepare<[], AlertRuleRow>('SELECT * FROM alert_rules ORDER BY created, id').all().map(toAlertRule);
  }

  async deleteRule(customerId: string, id: string, audit?: AuditOf<AlertRule>): Promise<boolean> {
    const row = audited(
      this.db,
      () => this.db.prepare<[string, string], AlertRuleRow>('DELETE FROM alert_rules WHERE customer_id = ? AND id = ? RETURNING *').get(customerId, id),
      (deleted) => (deleted && audit ? audit(toAlertRule(deleted)) : undefined),
    );
    return row !== undefined;
  }

  async open(alert: AlertRecord, message: string): Promise<string[] | undefined> {
    return this.db
      .transaction(() => {
        const inserted = this.db
          .prepare(
            `INSERT INTO alerts (id, customer_id, rule_id, kind, subject_type, subject_id, state, opened, resolved, details)
             VALUES (@id, @customer_id, @rule_id, @kind, @subject_type, @subject_id, @state, @opened, @resolved, @details)
             ON CONFLICT (rule_id, subject_type, subject_id) WHERE state = 'OPEN' DO NOTHING`,
          )
          .run(alertValues(alert));
        if (inserted.changes === 0) return undefined;
        return this.notify(alert.customer_id, alertEventType('OPEN'), alert.opened, message);
      })
      .immediate();
  }

  async openOf(ruleId: string): Promise<AlertRecord[]> {
    return this.db.prepare<[string], AlertRow>("SELECT * FROM alerts WHERE rule_id = ? AND state = 'OPEN'").all(ruleId).map(toAlert);
  }

  async resolve(alert: AlertRecord, now: number, message: (resolved: AlertRecord) => string): Promise<string[] | undefined> {
    return this.db
      .transaction(() => {
        const row = this.db.prepare<[number, string], AlertRow>("UPDATE alerts SET state = 'RESOLVED', resolved = ? WHERE id = ? AND state = 'OPEN' RETURNING *").get(now, alert.id);
        if (!row) return undefined;
        return this.notify(alert.customer_id, alertEventType('RESOLVED'), now, message(toAlert(row)));
      })
      .immediate();
  }

  async list(customerId: string, state: AlertState | undefined, limit: number): Promise<AlertRecord[]> {
    return this.db
      .prepare<[string, string | null, string | null, number], AlertRow>('SELECT * FROM alerts WHERE customer_id = ? AND (? IS NULL OR state = ?) ORDER BY opened DESC, id DESC LIMIT ?')
      .all(customerId, state ?? null, state ?? null, limit)
      .map(toAlert);
  }

  async customersTaking(type: string): Promise<string[]> {
    return this.db.prepare('SELECT DISTINCT customer_id FROM webhooks WHERE enabled = 1 AND event_types LIKE ? ORDER BY customer_id').pluck().all(takingType(type)) as string[];
  }

  async tracker(customerId: string): Promise<TrackerState | undefined> {
    const row = this.db.prepare<[string], TrackerRow>('SELECT * FROM alert_trackers WHERE customer_id = ?').get(customerId);
    return row && toTracker(row);
  }

  async trackedCustomers(): Promise<string[]> {
    return this.db.prepare('SELECT customer_id FROM alert_trackers ORDER BY customer_id').pluck().all() as string[];
  }

  async startTracker(customerId: string, state: TrackerState): Promise<void> {
    this.db
      .prepare('INSERT INTO alert_trackers (customer_id, cursor, started, open_jobs, last_scans) VALUES (@customer_id, @cursor, @started, @open_jobs, @last_scans) ON CONFLICT DO NOTHING')
      .run(trackerValues(customerId, state));
  }

  async advanceTracker(customerId: string, from: StreamPosition, next: TrackerState, completed: string[], now: number): Promise<string[] | undefined> {
    return this.db
      .transaction(() => {
        const moved = this.db
          .prepare('UPDATE alert_trackers SET cursor = @cursor, started = @started, open_jobs = @open_jobs, last_scans = @last_scans WHERE customer_id = @customer_id AND cursor = @from')
          .run({ ...trackerValues(customerId, next), from: JSON.stringify(from) });
        if (moved.changes === 0) return undefined;
        const told = new Set<string>();
        for (const payload of completed) for (const id of this.notify(customerId, JOB_COMPLETED_MESSAGE_TYPE, now, payload)) told.add(id);
        return [...told];
      })
      .immediate();
  }

  async dropTracker(customerId: string): Promise<void> {
    this.db.prepare('DELETE FROM alert_trackers WHERE customer_id = ?').run(customerId);
  }

  async connectivity(customerId: string): Promise<Record<string, string>> {
    const rows = this.db.prepare<[string], { gateway_id: string; connectivity: string }>('SELECT gateway_id, connectivity FROM gateway_connectivity WHERE customer_id = ?').all(customerId);
    return Object.fromEntries(rows.map((row) => [row.gateway_id, row.connectivity]));
  }

  async recordConnectivity(customerId: string, gatewayId: string, from: string | null, to: string, now: number, message: string | null): Promise<string[] | undefined> {
    return this.db
      .transaction(() => {
        const recorded =
          from === null
            ? this.db.prepare('INSERT INTO gateway_connectivity (gateway_id, customer_id, connectivity, changed_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING').run(gatewayId, customerId, to, now)
            : this.db.prepare('UPDATE gateway_connectivity SET connectivity = ?, changed_at = ? WHERE gateway_id = ? AND connectivity = ?').run(to, now, gatewayId, from);
        if (recorded.changes === 0) return undefined;
        return message === null ? [] : this.notify(customerId, CONNECTIVITY_MESSAGE_TYPE, now, message);
      })
      .immediate();
  }

  /** Queues the message for the customer's webhooks that take its type; their ids. */
  private notify(customerId: string, type: string, now: number, payload: string): string[] {
    const told = new Set<string>();
    queueMessages(this.db, type, [{ customer_id: customerId }], () => payload, now, told);
    return [...told];
  }
}
