/**
 * The audit log's vocabulary (docs/audit.md): which actions are recorded, who can act, and
 * what one entry holds. The store writes an entry in the same transaction as the change it
 * records; routes build entries with src/server/audit.ts.
 */

/** Every action the audit log records; `scanhub audit --action` takes these names. */
export const AUDIT_ACTIONS = [
  'auth.login',
  'auth.login_refused',
  'auth.locked_out',
  'user.created',
  'user.updated',
  'user.deleted',
  'user.invited',
  'user.invitation_accepted',
  'user.password_reset',
  'apikey.created',
  'apikey.revoked',
  'gateway.created',
  'gateway.deleted',
  'gateway.prepared',
  'gateway.provisioned',
  'gateway.certificate_revoked',
  'gateway.reprovisioned',
  'feature.set',
  'eula.agreed',
  'export.created',
  'retention.set',
  'signing_key.rotated',
  'command.created',
  'command.canceled',
  'command.delivered',
  'command.succeeded',
  'command.failed',
  'command.expired',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_rotated',
  'webhook.replayed',
  'webhook.disabled',
  'alert_rule.created',
  'alert_rule.deleted',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export function isAuditAction(value: string): value is AuditAction {
  return (AUDIT_ACTIONS as readonly string[]).includes(value);
}

/**
 * Who did it: a user (IdToken), an API key (`id` the key's id), a device (`id` the gateway id,
 * e.g. redeeming a provisioning token) or the operator (`scanhub operator ...`, `id` "operator").
 */
export interface AuditActor {
  type: 'user' | 'api_key' | 'device' | 'operator';
  id: string;
  email?: string;
}

/** What it was done to, e.g. `{ type: 'gateway', id }`. */
export interface AuditTarget {
  type: string;
  id: string;
}

/** One entry; `id` is a UUID, `time` milliseconds since the epoch. */
export interface AuditEntry {
  id: string;
  customerId: string;
  time: number;
  action: AuditAction;
  actor: AuditActor;
  target?: AuditTarget;
  /** The client's address as the server saw it (honours --trust-proxy). */
  ip?: string;
  /** Small facts about the change (names, roles, counts); never a secret. */
  details?: Record<string, unknown>;
}

/** A position in the audit log, whose pages run newest first by `(time, id)`. */
export interface AuditKey {
  time: number;
  id: string;
}

/** The operator actor: changes made by `scanhub operator ...` on the data directory or database. */
export const OPERATOR_ACTOR: AuditActor = { type: 'operator', id: 'operator' };

/** An entry of a change the operator made (`scanhub operator ...`, the first `serve`): no client address. */
export function operatorAuditEntry(
  id: string,
  customerId: string,
  time: number,
  action: AuditAction,
  target?: AuditTarget,
  details?: Record<string, unknown>,
): AuditEntry {
  return { id, customerId, time, action, actor: OPERATOR_ACTOR, ...(target ? { target } : {}), ...(details ? { details } : {}) };
}
