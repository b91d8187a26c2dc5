import type { AuditEntry } from '../../domain/audit.js';
import type { StreamPosition } from '../../domain/stream-cursor.js';
import type { AttemptOutcome, AuditOf, NewDelivery, SignalBus, WebhookChange, WebhookDelivery, WebhookRecord, WebhookRepository, WebhookWrite, WebhookWriteRoute, WebhookWritesDone } from '../ports/index.js';
import { writeError, writeFailure } from '../ports/index.js';
import type { WebhookSecretBox } from '../shared/sealing.js';
import { DeliveryTrims, KEPT_DELIVERIES, newDeliveryValues, toDelivery, toWebhookRecord, toWebhookRow, type DeliveryRow, type WebhookRow } from '../shared/webhook-rows.js';
import { audited } from './audit.js';
import { BetweenCommits, eachInSavepoint } from './between-commits.js';
import { prepared } from './statements.js';
import type { Db } from './open.js';

/** The webhooks and webhook_deliveries tables (migration 0020). */
export class SqliteWebhooks implements WebhookRepository {
  private readonly writes: BetweenCommits;
  /** The routed writes, when this connection is the ingest writer thread's (runWrites). */
  private readonly routedWrites: ReturnType<typeof eachInSavepoint<WebhookWrite>>;
  private readonly trims = new DeliveryTrims();
  /**
   * Where enqueue and succeededRun go (the ingest writer thread), and those of this turn not sent
   * yet: held in an object of its own, which the store's wrapper (mapStorageFull, whose methods
   * run on this object) shares.
   */
  private readonly routing: { route?: WebhookWriteRoute; routed: { write: WebhookWrite; resolve: () => void; reject: (error: Error) => void }[] } = { routed: [] };

  constructor(
    private readonly db: Db,
    private readonly box: WebhookSecretBox,
    signals: SignalBus,
  ) {
    this.writes = new BetweenCommits(db, signals);
    this.routedWrites = eachInSavepoint(db, (write: WebhookWrite) => this.apply(write));
  }

  async create(webhook: WebhookRecord, audit?: AuditEntry): Promise<void> {
    const row = toWebhookRow(webhook, this.box, await this.box.ready(), (enabled) => (enabled ? 1 : 0));
    audited(
      this.db,
      () =>
        this.db
          .prepare(
            `INSERT INTO webhooks (id, customer_id, url, event_types, description, enabled, secret, previous_secret, previous_until, created, last_updated, cursor, failing_since, disabled_reason)
             VALUES (@id, @customer_id, @url, @event_types, @description, @enabled, @secret, @previous_secret, @previous_until, @created, @last_updated, @cursor, @failing_since, @disabled_reason)`,
          )
          .run(row),
      () => audit,
    );
  }

  async get(customerId: string, id: string): Promise<WebhookRecord | undefined> {
    const row = prepared(this.db, 'SELECT * FROM webhooks WHERE customer_id = ? AND id = ?').get(customerId, id) as WebhookRow | undefined;
    return row && toWebhookRecord(row, this.box, await this.box.ready());
  }

  async page(customerId: string, after: { created: number; id: string } | null, limit: number): Promise<WebhookRecord[]> {
    const rows = this.db
      .prepare<[string, number, string, number], WebhookRow>('SELECT * FROM webhooks WHERE customer_id = ? AND (created, id) > (?, ?) ORDER BY created, id LIMIT ?')
      .all(customerId, after?.created ?? -1, after?.id ?? '', limit);
    return this.records(rows);
  }

  async enabled(): Promise<WebhookRecord[]> {
    return this.records(this.db.prepare<[], WebhookRow>('SELECT * FROM webhooks WHERE enabled = 1 ORDER BY created, id').all());
  }

  async update(customerId: string, id: string, change: WebhookChange, now: number, audit?: AuditOf<WebhookRecord>): Promise<WebhookRecord | undefined> {
    const enabling = change.enabled === true ? 1 : 0;
    return this.changed(
      `UPDATE webhooks SET url = coalesce(?, url), event_types = coalesce(?, event_types), description = coalesce(?, description),
         enabled = coalesce(?, enabled), last_updated = ?,
         failing_since = CASE WHEN ? = 1 THEN NULL ELSE failing_since END,
         disabled_reason = CASE WHEN ? = 1 THEN NULL ELSE disabled_reason END
       WHERE customer_id = ? AND id = ? RETURNING *`,
      [
        change.url ?? null,
        change.event_types ? JSON.stringify(change.event_types) : null,
        change.description ?? null,
        change.enabled === undefined ? null : change.enabled ? 1 : 0,
        now,
        enabling,
        enabling,
        customerId,
        id,
      ],
      audit,
    );
  }

  async delete(customerId: string, id: string, audit?: AuditOf<WebhookRecord>): Promise<boolean> {
    return (await this.changed('DELETE FROM webhooks WHERE customer_id = ? AND id = ? RETURNING *', [customerId, id], audit)) !== undefined;
  }

  async rotateSecret(customerId: string, id: string, secret: string, previousUntil: number, now: number, audit?: AuditOf<WebhookRecord>): Promise<WebhookRecord | undefined> {
    const sealed = this.box.seal(await this.box.ready(), id, secret);
    return this.changed(
      'UPDATE webhooks SET previous_secret = secret, secret = ?, previous_until = ?, last_updated = ? WHERE customer_id = ? AND id = ? RETURNING *',
      [sealed, previousUntil, now, customerId, id],
      audit,
    );
  }

  async moveCursor(customerId: string, id: string, cursor: StreamPosition, now: number, audit?: AuditOf<WebhookRecord>): Promise<WebhookRecord | undefined> {
    return this.changed('UPDATE webhooks SET cursor = ?, last_updated = ? WHERE customer_id = ? AND id = ? RETURNING *', [JSON.stringify(cursor), now, customerId, id], audit);
  }

  /** Routed as the successes (routeWrites), or between two commits of the ingest writer (BetweenCommits): a write of its own would sleep the server's thread in the busy handler while the writer holds the lock. */
  async enqueue(delivery: NewDelivery): Promise<void> {
    return this.write({ kind: 'enqueue', delivery });
  }

  async head(webhookId: string): Promise<WebhookDelivery | undefined> {
    const row = prepared(this.db, "SELECT * FROM webhook_deliveries WHERE webhook_id = ? AND status = 'PENDING' ORDER BY seq LIMIT 1").get(webhookId) as DeliveryRow | undefined;
    return row && toDelivery(row);
  }

  /**
   * With the other successes of this turn in one write transaction, in the ingest writer thread
   * (routeWrites) or between two of its commits (BetweenCommits): the webhooks of a customer
   * finish their messages of the same events at about the same time, and each one's own
   * transaction would wait for the writer's lock.
   */
  async succeededRun(outcomes: readonly AttemptOutcome[], next?: NewDelivery): Promise<void> {
    return this.write({ kind: 'succeeded', outcomes, next });
  }

  routeWrites(route: WebhookWriteRoute | undefined): void {
    this.routing.route = route;
  }

  runWrites(writes: WebhookWrite[]): WebhookWritesDone {
    const failures = new Map<WebhookWrite, unknown>();
    this.routedWrites.immediate(writes, failures);
    return writes.map((write) => (failures.has(write) ? writeFailure(failures.get(write)) : null));
  }

  /** The writes of a turn go to the route together, or each between two commits when there is none. */
  private write(write: WebhookWrite): Promise<void> {
    const { routing } = this;
    const route = routing.route;
    if (!route) return this.writes.run(() => this.apply(write));
    return new Promise((resolve, reject) => {
      routing.routed.push({ write, resolve, reject });
      if (routing.routed.length > 1) return;
      setImmediate(() => {
        const group = routing.routed;
        routing.routed = [];
        route(group.map((routed) => routed.write)).then(
          (done) => group.forEach((routed, i) => (done[i] === null ? routed.resolve() : routed.reject(writeError(done[i]!)))),
          (error: Error) => group.forEach((routed) => routed.reject(error)),
        );
      });
    });
  }

  private apply(write: WebhookWrite): void {
    if (write.kind === 'enqueue') this.insertDelivery(write.delivery);
    else this.success(write.outcomes, write.next);
  }

  /** Successes, inside a transaction: SUCCEEDED, the cursor moved, the next batch queued, old deliveries dropped (DeliveryTrims). */
  private success(outcomes: readonly AttemptOutcome[], next: NewDelivery | undefined): void {
    const { delivery } = outcomes[0]!;
    const last = outcomes[outcomes.length - 1]!.delivery;
    this.finish(outcomes[0]!, 'SUCCEEDED', null);
    let cleared = false;
    if (delivery.from && last.upto) {
      const moved = prepared(this.db, 'UPDATE webhooks SET cursor = ?, failing_since = NULL WHERE id = ? AND cursor = ?').run(JSON.stringify(last.upto), delivery.webhook_id, JSON.stringify(delivery.from));
      cleared = moved.changes === 1;
      if (cleared) for (let i = 1; i < outcomes.length; i++) this.insertDelivery(outcomes[i]!.delivery, outcomes[i]);
      if (next && cleared) this.insertDelivery(next);
    }
    if (!cleared) prepared(this.db, 'UPDATE webhooks SET failing_since = NULL WHERE id = ?').run(delivery.webhook_id);
    if (!this.trims.due(delivery.webhook_id, outcomes.length)) return;
    prepared(
      this.db,
      `DELETE FROM webhook_deliveries WHERE webhook_id = ? AND status <> 'PENDING' AND seq < (
         SELECT min(seq) FROM (SELECT seq FROM webhook_deliveries WHERE webhook_id = ? AND status <> 'PENDING' ORDER BY seq DESC LIMIT ?))`,
    ).run(delivery.webhook_id, delivery.webhook_id, KEPT_DELIVERIES);
  }

  async failed(outcome: AttemptOutcome, nextAttempt: number): Promise<void> {
    this.db
      .transaction(() => {
        this.finish(outcome, 'PENDING', nextAttempt);
        this.db.prepare('UPDATE webhooks SET failing_since = coalesce(failing_since, ?) WHERE id = ?').run(outcome.now, outcome.delivery.webhook_id);
      })
      .immediate();
  }

  async disabled(outcome: AttemptOutcome, reason: string, audit?: AuditEntry): Promise<void> {
    audited(
      this.db,
      () => {
        this.finish(outcome, 'FAILED', null);
        this.db.prepare('UPDATE webhooks SET enabled = 0, disabled_reason = ?, last_updated = ? WHERE id = ?').run(reason, outcome.now, outcome.delivery.webhook_id);
      },
      () => audit,
    );
  }

  async deliveries(customerId: string, webhookId: string, limit: number): Promise<WebhookDelivery[]> {
    return this.db
      .prepare<[string, string, number], DeliveryRow>('SELECT * FROM webhook_deliveries WHERE customer_id = ? AND webhook_id = ? ORDER BY seq DESC LIMIT ?')
      .all(customerId, webhookId, limit)
      .map(toDelivery);
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
    const row = audited(
      this.db,
      () => this.db.prepare<unknown[], WebhookRow>(sql).get(...values),
      (changed) => (changed && audit ? audit(toWebhookRecord(changed, this.box, key)) : undefined),
    );
    return row && toWebhookRecord(row, this.box, key);
  }

  /** A delivery queued, or (`done`) one already sent and answered 2xx. */
  private insertDelivery(delivery: NewDelivery, done?: AttemptOutcome): void {
    prepared(
      this.db,
      `INSERT INTO webhook_deliveries (id, webhook_id, customer_id, type, attempts, status, response_status, latency_ms, created, from_position, upto_position, payload)
       VALUES (@id, @webhook_id, @customer_id, @type, @attempts, @status, @response_status, @latency_ms, @created, @from_position, @upto_position, @payload)`,
    ).run(newDeliveryValues(delivery, done));
  }

  private finish(outcome: AttemptOutcome, status: string, nextAttempt: number | null): void {
    prepared(this.db, 'UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, response_status = ?, latency_ms = ?, next_attempt = ? WHERE id = ?').run(
      status,
      outcome.response_status,
      outcome.latency_ms,
      nextAttempt,
      outcome.delivery.id,
    );
  }
}
