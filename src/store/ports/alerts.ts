import type { AuditEntry } from '../../domain/audit.js';
import type { AuditOf } from './audit.js';

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
}
