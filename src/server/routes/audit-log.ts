import type { FastifyInstance } from 'fastify';
import { AUDIT_ACTIONS } from '../../domain/audit.js';
import { auditLogFilters, auditLogItem, nextAuditLogToken, resolveAuditLogQuery, type AuditLogParams, type AuditLogQuery } from '../../domain/audit-listing.js';
import type { ServerContext } from '../context.js';
import { badRequest } from '../errors.js';
import { customerParams, errorResponses, listBody, listOf } from '../schemas.js';
import { millisParameter } from './events.js';

/** An audit entry as the API shows it (docs/audit.md "Reading it"); absent fields are left out. */
const auditEntrySchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    time: { type: 'integer', description: 'Milliseconds since the epoch.' },
    action: { type: 'string', enum: [...AUDIT_ACTIONS] },
    actor: {
      type: 'object',
      description: 'Who did it: a user, an API key (id: the key id), a device (id: the gateway id) or the operator.',
      properties: {
        type: { type: 'string', enum: ['user', 'api_key', 'device', 'operator'] },
        id: { type: 'string' },
        email: { type: 'string' },
      },
      required: ['type', 'id'],
    },
    target: { type: 'object', properties: { type: { type: 'string' }, id: { type: 'string' } }, required: ['type', 'id'] },
    ip: { type: 'string', description: 'The client address as the server saw it.' },
    details: { type: 'object', additionalProperties: true, description: 'Small facts about the change; never a secret.' },
  },
  required: ['id', 'time', 'action', 'actor'],
} as const;

function describe(query: AuditLogQuery): string {
  const action = query.action === undefined ? '' : ` of action ${query.action}`;
  return `Audit entries${action} with ${new Date(query.start).toISOString()} <= time < ${new Date(query.end).toISOString()}, newest first`;
}

/** `GET /{customer_id}/audit-log`: keyset pages newest first, like the event list. */
export function registerAuditLogRoutes(app: FastifyInstance, ctx: ServerContext): void {
  app.get<{ Params: { customer_id: string }; Querystring: AuditLogParams }>('/:customer_id/audit-log', {
    config: { access: { permission: 'audit.read' } },
    schema: {
      operationId: 'listAuditLog',
      summary: 'The audit log of the customer, newest first, in pages of up to 500',
      description:
        'Entries with start_time <= time < end_time (default: the last 24 hours), newest first; links.next continues the query. Log-ins, users, invitations, API keys, gateways and their provisioning, features, EULA agreements and exports (docs/audit.md).',
      tags: ['audit'],
      params: customerParams,
      querystring: {
        type: 'object',
        properties: {
          start_time: millisParameter('Start of the range, included (time >= start). Default: one day before the end.'),
          end_time: millisParameter('End of the range, excluded (time < end). Default: now.'),
          next_token: { type: 'string', minLength: 1, maxLength: 2048, description: 'From links.next: continues the query of the previous page.' },
          limit: { type: 'integer', minimum: 1, maximum: 500, description: 'Entries per page, 1..500. Default 500, or the limit of next_token.' },
          action: { type: 'string', enum: [...AUDIT_ACTIONS], description: 'Only entries of this action.' },
        },
        additionalProperties: false,
      },
      response: { 200: listOf(auditEntrySchema, 'A page of audit entries'), ...errorResponses },
    },
    handler: async (request) => {
      const customerId = request.params.customer_id;
      const query = resolveAuditLogQuery(request.query, customerId, ctx.clock());
      if ('invalid' in query) throw badRequest(query.invalid);
      const page = await ctx.store.audit.newestBefore(customerId, query.start, query.before, query.limit, query.action);
      const last = page.entries.at(-1);
      const next = page.more && last ? `/${encodeURIComponent(customerId)}/audit-log?next_token=${nextAuditLogToken(customerId, query, last)}` : undefined;
      return listBody(page.entries.map(auditLogItem), describe(query), next, auditLogFilters(query));
    },
  });
}
