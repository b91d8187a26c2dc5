import type { AuditEntry } from '../../domain/audit.js';
import type { TrackerState } from '../../domain/job-tracking.js';
import type { StreamPosition } from '../../domain/stream-cursor.js';
import type { AuditOf } from './audit.js';

export type { TrackerState };

/** A rule that opens alerts (docs/alerts.md): its kind and the parameters of that kind. */
export interface AlertRule {
  id: string;
  customer_id: string;
  kind: string;
  parameters: Record<string, unknown>;
  created: number;
}

export type AlertState = 'OPEN' | 'RESOLVED';

export interface AlertRecord {
  id: string;
  customer_id: string;
  rule_id: string;
  kind: string;
  subject: { type: string; id: string };
  state: AlertState;
  opened: number;
  resolved: number | null;
  details: Record<string, unknown>;
}

/**
 * Alert rules and alerts. Opening and resolving queue an `alert.opened` / `alert.resolved`
 * message for each enabled webhook of the customer that takes it, in the same transaction.
 */
export interface AlertRepository {
  createRule(rule: AlertRule, audit?: AuditEntry): Promise<void>;
  /** The customer's rules, oldest first. */
  rules(customerId: string): Promise<AlertRule[]>;
  /** The rules of every customer (the evaluator's work). */
  allRules(): Promise<AlertRule[]>;
  /** Deletes the rule and resolves nothing (its open alerts stay as they are); false when unknown. */
  deleteRule(customerId: string, id: string, audit?: AuditOf<AlertRule>): Promise<boolean>;
  /** Opens the alert unless one of its rule and subject is open; the webhooks told, or undefined when it was open already. */
  open(alert: AlertRecord, message: string): Promise<string[] | undefined>;
  /** The open alerts of a rule. */
  openOf(ruleId: string): Promise<AlertRecord[]>;
  /** Resolves an open alert at `now`; the webhooks told, or undefined when it was not open. */
  resolve(alert: AlertRecord, now: number, message: (resolved: AlertRecord) => string): Promise<string[] | undefined>;
  /** The customer's alerts, newest first, of one state when given. */
  list(customerId: string, state: AlertState | undefined, limit: number): Promise<AlertRecord[]>;

  /** The customers with an enabled webhook that takes messages of this type (without reading a secret). */
  customersTaking(type: string): Promise<string[]>;
  /** The job tracker's state of the customer (docs/alerts.md "Jobs"); undefined before it started. */
  tracker(customerId: string): Promise<TrackerState | undefined>;
  /** The customers whose tracker started. */
  trackedCustomers(): Promise<string[]>;
  /** Starts the customer's tracker in this state unless it has one. */
  startTracker(customerId: string, state: TrackerState): Promise<void>;
  /**
   * Moves the tracker from `from` to `next` and queues a `job.completed` message (`data` each of
   * `completed`) for each enabled webhook of the customer that takes it, in one transaction; the
   * webhooks told, or undefined (nothing written) when the cursor was no longer `from`.
   */
  advanceTracker(customerId: string, from: StreamPosition, next: TrackerState, completed: string[], now: number): Promise<string[] | undefined>;
  /** Forgets the customer's tracker (no rule or webhook needs it any more). */
  dropTracker(customerId: string): Promise<void>;
  /** The connectivity last recorded per gateway of the customer (docs/alerts.md "Connectivity"). */
  connectivity(customerId: string): Promise<Record<string, string>>;
  /**
   * Records the gateway's connectivity `to` when the recorded one is `from` (null: none yet) and,
   * with a `message`, queues it as `gateway.connectivity` for each enabled webhook of the customer
   * that takes it, in one transaction; the webhooks told, or undefined when the recorded one was not `from`.
   */
  recordConnectivity(customerId: string, gatewayId: string, from: string | null, to: string, now: number, message: string | null): Promise<string[] | undefined>;
}
