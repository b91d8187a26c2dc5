import type { AuditEntry } from '../../domain/audit.js';
import type { StreamPosition } from '../../domain/stream-cursor.js';
import type { AttemptOutcome, AuditOf, NewDelivery, WebhookChange, WebhookDelivery, WebhookRecord, WebhookRepository } from '../ports/index.js';
import type { WebhookSecretBox } from '../shared/sealing.js';
import { DeliveryTrims, KEPT_DELIVERIES, WEBHOOK_COLUMNS, newDeliveryValues, toDelivery, toWebhookRecord, toWebhookRow, type DeliveryRow, type WebhookRow } from '../shared/webhook-rows.js';
import { audited } from './audit.js';
import type { Database, Queryable } from './pool.js';

const COLUMNS = WEBHOOK_COLUMNS.join(', ');

/** The webhooks and webhook_deliveries tables (migration 0015). */
export class PgWebhooks implements WebhookRepository {
  private readonly trims = new DeliveryTrims();

  constructor(
    private readonly db: Database,
    private readonly box: WebhookSecretBox,
  ) {}

  async create(webhook: WebhookRecord, audit?: AuditEntry): Promise<void> {
    const row = toWebhookRow(webhook, this.box, await this.box.ready(), (enabled) => enabled);
    await audited(
      this.db,
      (client) =>
        client.query(
          `INSERT INTO webhooks (${COLUMNS}) VALUES (${WEBHOOK_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`,
          WEBHOOK_COLUMNS.map((column) => row[column]),
        ),
      () => audit,
    );
  }

  async get(customerId: string, id: string): Promise<WebhookRecord | undefined> {
    const row = (await this.db.query<WebhookRow>(`SELECT ${COLUMNS} FROM webhooks WHERE customer_id = $1 AND id = $2`, [customerId, id])).rows[0];
    return row && toWebhookRecord(row, this.box, await this.box.ready());
  }

  async page(customerId: string, after: { created: number; id: string } | null, limit: number): Promise<WebhookRecord[]> {
    const { rows } = await this.db.query<WebhookRow>(
      `SELECT ${COLUMNS} FROM webhooks WHERE customer_id = $1 AND (created, id) > ($2, $3) ORDER BY created, id LIMIT $4`,
      [customerId, after?.created ?? -1, after?.id ?? '', limit],
    );
    return this.records(rows);
  }

  async enabled(): Promise<WebhookRecord[]> {
    return this.records((await this.db.query<WebhookRow>(`SELECT ${COLUMNS} FROM webhooks WHERE enabled ORDER BY created, id`)).rows);
  }

  async update(customerId: string, id: string, change: WebhookChange, now: number, audit?: AuditOf<WebhookRecord>): Promise<WebhookRecord | undefined> {
    const enabling = change.enabled === true;
    return this.changed(
      `UPDATE webhooks SET url = coalesce($3, url), event_types = coalesce($4, event_types), description = coalesce($5, description),
         enabled = coalesce($6, enabled), last_updated = $7,
         failing_since = CASE WHEN $8 THEN NULL ELSE failing_since END,
         disabled_reason = CASE WHEN $8 THEN NULL ELSE disabled_reason END
       WHERE customer_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      [customerId, id, change.url ?? null, change.event_types ? JSON.stringify(change.event_types) : null, change.description ?? null, change.enabled ?? null, now, enabling],
      audit,
    );
  }

  async delete(customerId: string, id: string, audit?: AuditOf<WebhookRecord>): Promise<boolean> {
    return (await this.changed(`DELETE FROM webhooks WHERE customer_id = $1 AND id = $2 RETURNING ${COLUMNS}`, [customerId, id], audit)) !== undefined;
  }

  async rotateSecret(customerId: string, id: string, secret: string, previousUntil: number, now: number, audit?: AuditOf<WebhookRecord>): Promise<WebhookRecord | undefined> {
    const sealed = this.box.seal(await this.box.ready(), id, secret);
    return this.changed(
      `UPDATE webhooks SET previous_secret = secret, secret = $3, previous_until = $4, last_updated = $5 WHERE customer_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      [customerId, id, sealed, previousUntil, now],
      audit,
    );
  }

  async moveCursor(customerId: string, id: string, cursor: StreamPosition, now: number, audit?: AuditOf<WebhookRecord>): Promise<WebhookRecord | undefined> {
    return this.changed(
      `UPDATE webhooks SET cursor = $3, last_updated = $4 WHERE customer_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      [customerId, id, JSON.stringify(cursor), now],
      audit,
    );
  }

  async enqueue(delivery: NewDelivery): Promise<void> {
    await insertDelivery(this.db, delivery);
  }

  async head(webhookId: string): Promise<WebhookDelivery | undefined> {
    const row = (await this.db.query<DeliveryRow>("SELECT * FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'PENDING' ORDER BY seq LIMIT 1", [webhookId])).rows[0];
    return row && toDelivery(row);
  }

  async succeededRun(outcomes: readonly AttemptOutcome[], next?: NewDelivery): Promise<void> {
    const { delivery } = outcomes[0]!;
    const last = outcomes[outcomes.length - 1]!.delivery;
    await this.db.transaction(async (client) => {
      await lockWebhook(client, delivery.webhook_id);
      await finish(client, outcomes[0]!, 'SUCCEEDED', null);
      if (delivery.from && last.upto) {
        const moved = await client.query('UPDATE webhooks SET cursor = $1 WHERE id = $2 AND cursor = $3', [JSON.stringify(last.upto), delivery.webhook_id, JSON.stringify(delivery.from)]);
        if (moved.rowCount === 1) for (const done of outcomes.slice(1)) await insertDelivery(client, done.delivery, done);
        if (next && moved.rowCount === 1) await insertDelivery(client, next);
      }
      await client.query('UPDATE webhooks SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL', [delivery.webhook_id]);
      if (!this.trims.due(delivery.webhook_id, outcomes.length)) return;
      await client.query(
        `DELETE FROM webhook_deliveries WHERE webhook_id = $1 AND status <> 'PENDING' AND seq < (
           SELECT min(seq) FROM (SELECT seq FROM webhook_deliveries WHERE webhook_id = $1 AND status <> 'PENDING' ORDER BY seq DESC LIMIT $2) kept)`,
        [delivery.webhook_id, KEPT_DELIVERIES],
      );
    });
  }

  async failed(outcome: AttemptOutcome, nextAttempt: number): Promise<void> {
    await this.db.transaction(async (client) => {
      await lockWebhook(client, outcome.delivery.webhook_id);
      await finish(client, outcome, 'PENDING', nextAttempt);
      await client.query('UPDATE webhooks SET failing_since = coalesce(failing_since, $1) WHERE id = $2', [outcome.now, outcome.delivery.webhook_id]);
    });
  }

  async disabled(outcome: AttemptOutcome, reason: string, audit?: AuditEntry): Promise<void> {
    await audited(
      this.db,
      async (client) => {
        await lockWebhook(client, outcome.delivery.webhook_id);
        await finish(client, outcome, 'FAILED', null);
        await client.query('UPDATE webhooks SET enabled = false, disabled_reason = $1, last_updated = $2 WHERE id = $3', [reason, outcome.now, outcome.delivery.webhook_id]);
      },
      () => audit,
    );
  }

  async deliveries(customerId: string, webhookId: string, limit: number): Promise<WebhookDelivery[]> {
    const { rows } = await this.db.query<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE customer_id = $1 AND webhook_id = $2 ORDER BY seq DESC LIMIT $3', [
      customerId,
      webhookId,
      limit,
    ]);
    return rows.map(toDelivery);
  }

  /** The records of rows; the key is loaded (or made) only when there is a row to open. */
  private async records(rows: WebhookRow[]): Promise<WebhookRecord[]> {
    if (rows.length === 0) return [];
    const key = await this.box.ready();
    return rows.map((row) => toWebhookRecord(row, this.box, key));
  }

  /** One statement that returns the changed webhook's row, with its audit entry in the same transaction. */
  private async changed(sql: string, values: unknown[], audit?: AuditOf<WebhookRecord>): Promise<WebhookRecord | undefined> {
    const key = await this.box.ready();
    const { rows } = await audited(
      this.db,
      (client) => client.query<WebhookRow>(sql, values),
      (result) => (result.rows[0] && audit ? audit(toWebhookRecord(result.rows[0], this.box, key)) : undefined),
    );
    return rows[0] && toWebhookRecord(rows[0], this.box, key);
  }
}

/**
 * Locks the webhook's row before its deliveries': a deletion locks the row, then cascades to the
 * deliveries, so taking them in the other order could deadlock with it.
 */
function lockWebhook(client: Queryable, webhookId: string) {
  return client.query('SELECT 1 FROM webhooks WHERE id = $1 FOR UPDATE', [webhookId]);
}

/** A delivery queued, or (`done`) one already sent and answered 2xx. */
function insertDelivery(client: Queryable, delivery: NewDelivery, done?: AttemptOutcome) {
  const v = newDeliveryValues(delivery, done);
  return client.query(
    `INSERT INTO webhook_deliveries (id, webhook_id, customer_id, type, attempts, status, response_status, latency_ms, created, from_position, upto_position, payload)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [v.id, v.webhook_id, v.customer_id, v.type, v.attempts, v.status, v.response_status, v.latency_ms, v.created, v.from_position, v.upto_position, v.payload],
  );
}

function finish(client: Queryable, outcome: AttemptOutcome, status: string, nextAttempt: number | null) {
  return client.query('UPDATE webhook_deliveries SET status = $1, attempts = attempts + 1, response_status = $2, latency_ms = $3, next_attempt = $4 WHERE id = $5', [
    status,
    outcome.response_status,
    outcome.latency_ms,
    nextAttempt,
    outcome.delivery.id,
  ]);
}
