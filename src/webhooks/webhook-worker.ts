import { randomUUID } from 'node:crypto';
import { operatorAuditEntry } from '../domain/audit.js';
import { comparePositions, laterPosition, type StreamPosition } from '../domain/stream-cursor.js';
import { retryDelay, type WebhookTimings } from '../domain/webhooks.js';
import type { AttemptOutcome, NewDelivery, Store, WebhookDelivery, WebhookRecord } from '../store/ports/index.js';
import { messageBody, nextBatch, signedHeaders, type SharedBatches } from './messages.js';
import type { RecentEvents } from './recent-events.js';
import type { WebhookSender } from './sender.js';

/** The wait before reading again while announced commits are not readable yet (PostgreSQL). */
const NOT_YET_READABLE_MS = 20;
/** The longest a worker waits without a wake-up: a signal lost (a listener gap) delays nothing longer. */
const IDLE_MS = 5_000;
/**
 * Batches sent after a 2xx while the writes of the successes before them are not committed yet
 * (docs/webhooks.md "Delivery"): the next message goes without waiting for the write. Such a
 * write waits for the ingest writer's commit under way (SQLite), so a webhook keeps up with
 * ingest only while these batches hold more events than ingest stores meanwhile.
 */
export const UNWRITTEN = 16;

/** What a worker needs from its deliverer. */
export interface WorkerHost {
  store: Store;
  sender: WebhookSender;
  /** The commit order, read once for every webhook of a customer. */
  events: RecentEvents;
  /** The batches built lately, for the webhooks at the same position. */
  batches: SharedBatches;
  clock: () => number;
  timings: WebhookTimings;
  random: () => number;
  log: { warn(fields: object, message: string): void; info(fields: object, message: string): void };
}

/**
 * Delivers one webhook, one message at a time, in order (docs/webhooks.md "Delivery"): the oldest
 * pending delivery, else the next batch of events after its cursor. Every state is in the store,
 * so a worker that stops (lease lost, process killed) leaves nothing another cannot resume.
 */
export class WebhookWorker {
  private stopped = false;
  private woken = false;
  private wakeUp: (() => void) | undefined;
  private readonly abort = new AbortController();
  /** How far the log was read past the cursor without finding a subscribed event, and the cursor that was from (a replay moves it back). */
  private scanned: { cursor: string; position: StreamPosition } = { cursor: '', position: [] };
  /** A position commits were announced up to that reads must reach. */
  private wanted: StreamPosition | undefined;
  /** The batch queued with the last one's success, and its events as read: its first attempt sends them. */
  private prepared: { id: string; data: Buffer[] } | undefined;
  /** The successes recorded so far, one write after the other (each one's cursor update needs the one before), and how many are not committed yet. */
  private written: Promise<void> = Promise.resolve();
  private unwritten = 0;
  /** The successes waiting for the write before theirs: written together, as one (a write per message cost more than the rest of its delivery). */
  private waiting: { outcomes: AttemptOutcome[]; next: NewDelivery | undefined } | undefined;
  /** The webhook changed or has a message queued since it was read: the next batch waits for a fresh read. */
  private changed = false;
  readonly done: Promise<void>;

  constructor(
    private readonly host: WorkerHost,
    readonly customerId: string,
    readonly webhookId: string,
  ) {
    this.done = this.run().catch((error: Error) => this.host.log.warn({ webhook_id: webhookId, reason: error.message }, 'webhook worker stopped by an error'));
  }

  /**
   * Something may be new (events committed, a message queued, the webhook changed): look now.
   * `through` (PostgreSQL): the committed events lie before it; a read that has not reached it yet
   * (an older transaction still open) is tried again soon, as the live stream's hubs do.
   */
  wake(through?: StreamPosition): void {
    if (through) this.wanted = this.wanted ? laterPosition(this.wanted, through) : through;
    this.woken = true;
    this.wakeUp?.();
  }

  /** The webhook changed, or a message of its own was queued: read it again before the next batch. */
  webhookChanged(): void {
    this.changed = true;
    this.wake();
  }

  stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    this.wakeUp?.();
    return this.done;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      this.woken = false;
      try {
        const waitMs = await this.step();
        if (waitMs > 0) await this.sleep(waitMs);
      } catch (error) {
        if (this.stopped) break;
        this.host.log.warn({ webhook_id: this.webhookId, reason: (error as Error).message }, 'webhook delivery failed to read or record; retrying');
        await this.sleep(this.host.timings.retryBaseMs);
      }
    }
    await this.written.catch(() => undefined);
  }

  /** One message sent, or how long to wait for the next (Infinity: until woken). */
  private async step(): Promise<number> {
    const { store, clock } = this.host;
    await this.writesDone();
    this.changed = false;
    const webhook = await store.webhooks.get(this.customerId, this.webhookId);
    if (!webhook || !webhook.enabled) return Infinity;
    if (!store.eventLog.isPosition(webhook.cursor)) {
      // A cursor of another store (copied by operator migrate): start at the head of this one.
      await store.webhooks.moveCursor(webhook.customer_id, webhook.id, await store.eventLog.head(), clock());
      return 0;
    }
    let delivery = await store.webhooks.head(webhook.id);
    let data: Buffer[] | undefined;
    if (delivery && delivery.id === this.prepared?.id) data = this.prepared.data;
    this.prepared = undefined;
    if (!delivery) {
      const cursor = JSON.stringify(webhook.cursor);
      const from = this.scanned.cursor === cursor ? this.scanned.position : webhook.cursor;
      const batch = await nextBatch(this.host.events, webhook, from, clock(), this.host.batches);
      this.scanned = { cursor, position: batch.scanned };
      if (!batch.delivery) {
        if (this.wanted && comparePositions(batch.scanned, this.wanted) < 0) return NOT_YET_READABLE_MS;
        this.wanted = undefined;
        return IDLE_MS;
      }
      await store.webhooks.enqueue(batch.delivery);
      delivery = pendingDelivery(batch.delivery);
      data = batch.data;
    }
    if (delivery.from && !store.eventLog.isPosition(delivery.from)) {
      await store.webhooks.disabled(outcomeOf(delivery, clock(), null, 0), 'a batch of another store was pending (operator migrate): enable the webhook again to resume');
      return 0;
    }
    const due = delivery.next_attempt ?? 0;
    if (due > clock()) return due - clock();
    // Changed while this step read (a rotated secret, say): the next step reads it again and sends this delivery then.
    if (this.changed) {
      if (data) this.prepared = { id: delivery.id, data };
      return 0;
    }
    let next = await this.send(webhook, delivery, data);
    // The batch after one acknowledged, while its success is written (queued with it): sent at once.
    const succeeding = { ...webhook, failing_since: null };
    while (next && !this.stopped && !this.changed) {
      if (this.unwritten >= UNWRITTEN) await this.writesDone();
      this.prepared = undefined;
      next = await this.send(succeeding, pendingDelivery(next.delivery), next.data);
    }
    return 0;
  }

  /** Waits for the successes recorded so far; a failed one throws (the step then starts again from what is stored). */
  private async writesDone(): Promise<void> {
    const written = this.written;
    try {
      await written;
    } finally {
      if (this.written === written) this.written = Promise.resolve();
    }
  }

  /**
   * Records a success after those before it, without waiting for it: with the successes that
   * wait for the same write before them, if any (each one's batch followed the one before).
   */
  private record(outcome: AttemptOutcome, next: NewDelivery | undefined): void {
    this.unwritten++;
    if (this.waiting) {
      this.waiting.outcomes.push(outcome);
      this.waiting.next = next;
      return;
    }
    const group = { outcomes: [outcome], next };
    this.waiting = group;
    // The group closes when the write before it settles; after a failed one it is not written (the step resumes from what is stored).
    const write = this.written
      .finally(() => this.waiting === group && (this.waiting = undefined))
      .then(() => this.host.store.webhooks.succeededRun(group.outcomes, group.next));
    this.written = write;
    write.catch(() => undefined).finally(() => (this.unwritten -= group.outcomes.length));
  }

  /** Sends one message and records its outcome; after a batch's 2xx, the next batch (queued with its success) to send right away. */
  private async send(webhook: WebhookRecord, delivery: WebhookDelivery, data?: Buffer[]): Promise<{ delivery: NewDelivery; data: Buffer[] } | undefined> {
    const { store, sender, clock, timings } = this.host;
    const body = await messageBody(this.host.events, webhook, delivery, data);
    const result = await sender.send(webhook.url, signedHeaders(webhook, delivery, body, clock()), body, this.abort.signal);
    if (this.stopped && result.status === null) return undefined; // cut off by stop(): still pending, resent by whoever delivers next
    const now = clock();
    const outcome = outcomeOf(delivery, now, result.status, result.latencyMs);
    if (result.status !== null && result.status >= 200 && result.status < 300) {
      // A failed read leaves the next batch to the next step.
      const next = await this.following(webhook, delivery, now).catch(() => undefined);
      this.record(outcome, next);
      return next && this.prepared?.id === next.id ? { delivery: next, data: this.prepared.data } : undefined;
    }
    // A failure is recorded on the delivery's row, which the success before it queued.
    await this.writesDone();
    const why = result.status !== null ? `answered ${result.status}` : result.error ?? 'no answer';
    if (result.status === 410) {
      await this.disable(webhook, outcome, 'the receiver answered 410 Gone');
      return undefined;
    }
    const failingSince = webhook.failing_since ?? now;
    if (now - failingSince >= timings.giveUpMs) {
      await this.disable(webhook, outcome, `no delivery succeeded since ${new Date(failingSince).toISOString()} (last: ${why})`);
      return undefined;
    }
    const next = now + retryDelay(delivery.attempts + 1, timings, this.host.random());
    this.host.log.info({ webhook_id: webhook.id, delivery_id: delivery.id, reason: why, next_attempt: next }, 'webhook delivery failed; retrying');
    await store.webhooks.failed(outcome, next);
    return undefined;
  }

  /**
   * The batch after a batch just delivered, to queue with its success (one write per message), or
   * undefined (not a batch, or nothing new yet: the next step looks again).
   */
  private async following(webhook: WebhookRecord, delivery: WebhookDelivery, now: number): Promise<NewDelivery | undefined> {
    if (!delivery.from || !delivery.upto) return undefined;
    const cursor = delivery.upto;
    const batch = await nextBatch(this.host.events, { ...webhook, cursor }, cursor, now, this.host.batches);
    this.scanned = { cursor: JSON.stringify(cursor), position: batch.scanned };
    if (batch.delivery && batch.data !== undefined) this.prepared = { id: batch.delivery.id, data: batch.data };
    return batch.delivery;
  }

  private async disable(webhook: WebhookRecord, outcome: ReturnType<typeof outcomeOf>, reason: string): Promise<void> {
    const audit = operatorAuditEntry(randomUUID(), webhook.customer_id, outcome.now, 'webhook.disabled', { type: 'webhook', id: webhook.id }, { reason, url: webhook.url });
    await this.host.store.webhooks.disabled(outcome, reason, { ...audit, actor: { type: 'operator', id: 'webhook-deliverer' } });
    this.host.log.warn({ webhook_id: webhook.id, reason }, 'webhook disabled');
  }

  /** Waits `ms` (Infinity: no timer) or until woken or stopped. */
  private sleep(ms: number): Promise<void> {
    if (this.woken || this.stopped) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = Number.isFinite(ms) ? setTimeout(() => done(), ms) : undefined;
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve();
      };
      this.wakeUp = done;
    });
  }
}

/** A batch just queued, as the store's head() would read it (its fields named: a spread copies by looking each one up). */
function pendingDelivery(delivery: NewDelivery): WebhookDelivery {
  const { id, webhook_id, customer_id, type, created, from, upto, payload } = delivery;
  return { id, webhook_id, customer_id, type, attempts: 0, status: 'PENDING', response_status: null, latency_ms: null, next_attempt: null, created, from, upto, payload };
}

function outcomeOf(delivery: WebhookDelivery, now: number, status: number | null, latencyMs: number) {
  return { delivery, now, response_status: status, latency_ms: latencyMs };
}
