import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { AuditAction, AuditActor, AuditEntry, AuditTarget } from '../domain/audit.js';
import { principalOf } from './access.js';
import type { ServerContext } from './context.js';

/**
 * The audit entry for a change a guarded route is about to make: the caller (user or API key)
 * as actor, the client's address, the context's clock. Pass it to the store method that makes
 * the change, which writes both in one transaction.
 */
export function auditEntry(
  ctx: ServerContext,
  request: FastifyRequest,
  action: AuditAction,
  target?: AuditTarget,
  details?: Record<string, unknown>,
): AuditEntry {
  const params = request.params as Record<string, string>;
  return auditEntryBy(ctx, request, principalOf(request).actor, params.customer_id, action, target, details);
}

/** The same for a route without a guard (log-in, invitation, provisioning): the actor is named. */
export function auditEntryBy(
  ctx: ServerContext,
  request: FastifyRequest,
  actor: AuditActor,
  customerId: string,
  action: AuditAction,
  target?: AuditTarget,
  details?: Record<string, unknown>,
): AuditEntry {
  return {
    id: randomUUID(),
    customerId,
    time: ctx.clock(),
    action,
    actor,
    ...(target ? { target } : {}),
    ip: request.ip,
    ...(details ? { details } : {}),
  };
}
