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
import type { Database, Queryable } from './pool.js';
import { queueMessages } from './webhook-messages.js';

/** The alert_rules and alerts tables (migration 0015). */
export class PgAlerts implements AlertRepository {
  constructor(private readonly db: Database) {}

  async createRule(rule: AlertRule, audit?: AuditEntry): Promise<void> {
    await audited(
      this.db,
      (client) =>
        client.query('INSERT INTO alert_rules (id, customer_id, kind, parameters, created) VALUES ($1, $2, $3, $4, $5)', [rule.id, rule.customer_id, rule.kind, JSON.stringify(rule.parameters), rule.created]),
      () => audit,
    );
  }

  async rules(customerId: string): Promise<AlertRule[]> {
    return (await this.db.query<AlertRuleRow>('SELECT * FROM alert_rules WHERE customer_id = $1 ORDER BY created, id', [customerId])).rows.map(toAlertRule);
  }

  async allRules(): Promise<AlertRule[]> {
    return (await this.db.query<AlertRuleRow>('SELECT * FROM alert_rules ORDER BY created, id')).rows.map(toAlertRule);
  }

  async deleteRule(customerId: string, id: string, audit?: AuditOf<AlertRule>): Promise<boolean> {
    const { rows } = await audited(
      this.db,
      (client) => client.query<AlertRuleRow>('DELETE FROM alert_rules WHERE customer_id = $1 AND id = $2 RETURNING *', [customerId, id]),
      (deleted) => (deleted.rows[0] && audit ? audit(toAlertRule(deleted.rows[0])) : undefined),
    );
    return rows.length === 1;
  }

  async open(alert: AlertRecord, message: string): Promise<string[] | undefined> {
    const v = alertValues(alert);
    return this.db.transaction(async (client) => {
      const inserted = await client.query(
        `INSERT INTO alerts (id, customer_id, rule_id, kind, subject_type, subject_id, state, opened, resolved, details)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         ON CONFLICT (rule_id, subject_type, subject_id) WHERE state = 'OPEN' DO NOTHING`,
        [v.id, v.customer_id, v.rule_id, v.kind, v.subject_type, v.subject_id, v.state, v.opened, v.resolved, v.details],
      );
      if (inserted.rowCount === 0) return undefined;
      return notify(client, alert.customer_id, alertEventType('OPEN'), alert.opened, message);
    });
  }

  async openOf(ruleId: string): Promise<AlertRecord[]> {
    return (await this.db.query<AlertRow>("SELECT * FROM alerts WHERE rule_id = $1 AND state = 'OPEN'", [ruleId])).rows.map(toAlert);
  }

  async resolve(alert: AlertRecord, now: number, message: (resolved: AlertRecord) => string): Promise<string[] | undefined> {
    return this.db.transaction(async (client) => {
      const row = (await client.query<AlertRow>("UPDATE alerts SET state = 'RESOLVED', resolved = $1 WHERE id = $2 AND state = 'OPEN' RETURNING *", [now, alert.id])).rows[0];
      if (!row) return undefined;
      return notify(client, alert.customer_id, alertEventType('RESOLVED'), now, message(toAlert(row)));
    });
  }

  async list(customerId: string, state: AlertState | undefined, limit: number): Promise<AlertRecord[]> {
    const { rows } = await this.db.query<AlertRow>('SELECT * FROM alerts WHERE customer_id = $1 AND ($2::text IS NULL OR state = $2) ORDER BY opened DESC, id DESC LIMIT $3', [
      customerId,
      state ?? null,
      limit,
    ]);
    return rows.map(toAlert);
  }

  async customersTaking(type: string): Promise<string[]> {
    const { rows } = await this.db.query<{ customer_id: string }>('SELECT DISTINCT customer_id FROM webhooks WHERE enabled AND event_types LIKE $1 ORDER BY customer_id', [takingType(type)]);
    return rows.map((row) => row.customer_id);
  }

  async tracker(customerId: string): Promise<TrackerState | undefined> {
    const row = (await this.db.query<TrackerRow>('SELECT * FROM alert_trackers WHERE customer_id = $1', [customerId])).rows[0];
    return row && toTracker(row);
  }

  async trackedCustomers(): Promise<string[]> {
    return (await this.db.query<{ customer_id: string }>('SELECT customer_id FROM alert_trackers ORDER BY customer_id')).rows.map((row) => row.customer_id);
  }

  async startTracker(customerId: string, state: TrackerState): Promise<void> {
    const v = trackerValues(customerId, state);
    await this.db.query('INSERT INTO alert_trackers (customer_id, cursor, started, open_jobs, last_scans) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING', [
      v.customer_id,
      v.cursor,
      v.started,
      v.open_jobs,
      v.last_scans,
    ]);
  }

  async advanceTracker(customerId: string, from: StreamPosition, next: TrackerState, completed: string[], now: number): Promise<string[] | undefined> {
    const v = trackerValues(customerId, next);
    return this.db.transaction(async (client) => {
      const moved = await client.query('UPDATE alert_trackers SET cursor = $2, started = $3, open_jobs = $4, last_scans = $5 WHERE customer_id = $1 AND cursor = $6', [
        v.customer_id,
        v.cursor,
        v.started,
        v.open_jobs,
        v.last_scans,
        JSON.stringify(from),
      ]);
      if (moved.rowCount === 0) return undefined;
      const told = new Set<string>();
      for (const payload of completed) for (const id of await notify(client, customerId, JOB_COMPLETED_MESSAGE_TYPE, now, payload)) told.add(id);
      return [...told];
    });
  }

  async dropTracker(customerId: string): Promise<void> {
    await this.db.query('DELETE FROM alert_trackers WHERE customer_id = $1', [customerId]);
  }

  async connectivity(customerId: string): Promise<Record<string, string>> {
    const { rows } = await this.db.query<{ gateway_id: string; connectivity: string }>('SELECT gateway_id, connectivity FROM gateway_connectivity WHERE customer_id = $1', [customerId]);
    return Object.fromEntries(rows.map((row) => [row.gateway_id, row.connectivity]));
  }

  async recordConnectivity(customerId: string, gatewayId: string, from: string | null, to: string, now: number, message: string | null): Promise<string[] | undefined> {
    return this.db.transaction(async (client) => {
      const recorded =
        from === null
          ? await client.query('INSERT INTO gateway_connectivity (gateway_id, customer_id, connectivity, changed_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [gatewayId, customerId, to, now])
          : await client.query('UPDATE gateway_connectivity SET connectivity = $1, changed_at = $2 WHERE gateway_id = $3 AND connectivity = $4', [to, now, gatewayId, from]);
      if (recorded.rowCount === 0) return undefined;
      return message === null ? [] : notify(client, customerId, CONNECTIVITY_MESSAGE_TYPE, now, message);
    });
  }
}

/** Queues the message for the customer's webhooks that take its type; their ids. */
function notify(client: Queryable, customerId: string, type: string, now: number, payload: string): Promise<string[]> {
  return queueMessages(client, type, [{ customer_id: customerId }], () => payload, now);
}
