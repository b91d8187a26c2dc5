import type { AuditEntry } from '../../domain/audit.js';
import type { StreamPosition } from '../../domain/stream-cursor.js';
import type { AuditOf } from './audit.js';
import type { WriteFailure } from './write-failure.js';

/** A webhook as stored (docs/webhooks.md); its secrets are sealed at rest and open here. */
export interface WebhookRecord {
  id: string;
  customer_id: string;
  url: string;
  event_types: string[];
  description: string;
  enabled: boolean;
  /** `whsec_...`: signs every message. */
  secret: string;
  /** The secret before the last rotation, which also signs until `previous_until`. */
  previous_secret: string | null;
  previous_until: number | null;
  created: number;
  last_updated: number;
  /** Every event up to here was delivered (or is not of a subscribed type). */
  cursor: StreamPosition;
  /** When the delivery at the head of the queue first failed; null while deliveries succeed. */
  failing_since: number | null;
  /** Why the deliverer disabled the webhook (410, three days of failures); null otherwise. */
  disabled_reason: string | null;
}

export type WebhookChange = Partial<Pick<WebhookRecord, 'url' | 'event_types' | 'description' | 'enabled'>>;

export type DeliveryStatus = 'PENDING' | 'SUCCEEDED' | 'FAILED';

/** One message to one webhook: a batch of stored events (`from`..`upto` of the commit order) or a message of its own (`payload`). */
export interface WebhookDelivery {
  id: string;
  webhook_id: string;
  customer_id: string;
  type: string;
  attempts: number;
  status: DeliveryStatus;
  response_status: number | null;
  latency_ms: number | null;
  /** When the next attempt is due (PENDING); null for the first, which is due at once. */
  next_attempt: number | null;
  created: number;
  /** A batch: the events after `from` up to and including `upto` (of the delivery's type). */
  from: StreamPosition | null;
  upto: StreamPosition | null;
  /** Any other message: its JSON `data`. */
  payload: string | null;
}

export type NewDelivery = Pick<WebhookDelivery, 'id' | 'webhook_id' | 'customer_id' | 'type' | 'created' | 'from' | 'upto' | 'payload'>;

/** How an attempt ended, as the deliverer records it. */
export interface AttemptOutcome {
  delivery: WebhookDelivery;
  now: number;
  response_status: number | null;
  latency_ms: number;
}

/**
 * Webhooks and their deliveries. One PENDING delivery at the head of each webhook's queue is sent
 * at a time; a batch's success moves the webhook's cursor to its `upto` in the same transaction,
 * unless a replay moved the cursor meanwhile.
 */
export interface WebhookRepository {
  create(webhook: WebhookRecord, audit?: AuditEntry): Promise<void>;
  get(customerId: string, id: string): Promise<WebhookRecord | undefined>;
  /** The customer's webhooks in (created, id) order after the position. */
  page(customerId: string, after: { created: number; id: string } | null, limit: number): Promise<WebhookRecord[]>;
  /** The enabled webhooks of every customer (the deliverer's work list). */
  enabled(): Promise<WebhookRecord[]>;
  /** Applies the change; enabling clears failing_since and disabled_reason. Undefined when unknown. */
  update(customerId: string, id: string, change: WebhookChange, now: number, audit?: AuditOf<WebhookRecord>): Promise<WebhookRecord | undefined>;
  /** Deletes the webhook and its deliveries; false when unknown. */
  delete(customerId: string, id: string, audit?: AuditOf<WebhookRecord>): Promise<boolean>;
  /** Makes `secret` the secret, the current one the previous until `previousUntil`. */
  rotateSecret(customerId: string, id: string, secret: string, previousUntil: number, now: number, audit?: AuditOf<WebhookRecord>): Promise<WebhookRecord | undefined>;
  /** Moves the cursor back (or forward) to `cursor`: events after it are sent again. */
  moveCursor(customerId: string, id: string, cursor: StreamPosition, now: number, audit?: AuditOf<WebhookRecord>): Promise<WebhookRecord | undefined>;
  /** Queues a message for the webhook. */
  enqueue(delivery: NewDelivery): Promise<void>;
  /** The oldest PENDING delivery of the webhook. */
  head(webhookId: string): Promise<WebhookDelivery | undefined>;
  /**
   * 2xx answers, written as one: SUCCEEDED; failing_since cleared; older deliveries beyond the
   * kept number dropped. `outcomes[0]` is of a stored delivery, each later one of the batch that
   * followed the one before it, sent before that success was written (stored now, SUCCEEDED).
   * Batches move the cursor from the first's `from` to the last's `upto`, and `next` (the batch
   * after it) is queued in the same transaction when the cursor moved; a replay meanwhile records
   * the first alone.
   */
  succeededRun(outcomes: readonly AttemptOutcome[], next?: NewDelivery): Promise<void>;
  /** A failure to retry at `nextAttempt`; failing_since set when not yet. */
  failed(outcome: AttemptOutcome, nextAttempt: number): Promise<void>;
  /** A failure that disables the webhook (410, or failing too long): the delivery FAILED, the webhook disabled with `reason`. */
  disabled(outcome: AttemptOutcome, reason: string, audit?: AuditEntry): Promise<void>;
  /** The webhook's deliveries, newest first (at most DELIVERIES_KEPT are kept). */
  deliveries(customerId: string, webhookId: string, limit: number): Promise<WebhookDelivery[]>;
  /**
   * SQLite only: `serve` routes the deliverer's frequent writes (enqueue, succeededRun) to the
   * ingest writer thread, which runs them between its commits on its own connection (runWrites
   * there): a commit of any other connection empties the writer's page cache. Without a route
   * they run on this connection between two of the writer's commits. `undefined` drops the route.
   */
  routeWrites?(route: WebhookWriteRoute | undefined): void;
  /** SQLite only, in the ingest writer thread: runs routed writes on this connection, in one transaction, each in a savepoint of its own. */
  runWrites?(writes: WebhookWrite[]): WebhookWritesDone;
}

/** A routed write of the deliverer: a message queued, or successes (WebhookRepository.enqueue, succeededRun). */
export type WebhookWrite = { kind: 'enqueue'; delivery: NewDelivery } | { kind: 'succeeded'; outcomes: readonly AttemptOutcome[]; next?: NewDelivery };

/** Per write of a group, null or why it failed (its savepoint rolled back; the others of its group stand). */
export type WebhookWritesDone = (WriteFailure | null)[];

export type WebhookWriteRoute = (writes: WebhookWrite[]) => Promise<WebhookWritesDone>;
