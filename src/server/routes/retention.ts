import type { FastifyInstance } from 'fastify';
import { MAX_RETENTION_DAYS } from '../../domain/retention.js';
import { auditEntry } from '../audit.js';
import type { ServerContext } from '../context.js';
import { customerParams, errorResponses } from '../schemas.js';

const eventsDaysDescription = `Days events are kept, 1..${MAX_RETENTION_DAYS}: events with created older than that many days (times 86,400,000 ms) before now are deleted. null: kept for ever (the default).`;

const lastDeletionSchema = {
  type: ['object', 'null'],
  description: 'The last finished deletion pass (read-only; null before the first). One runs every 10 minutes and soon after a change.',
  properties: {
    started: { type: 'integer', description: 'When the pass began, milliseconds since the epoch.' },
    finished: { type: 'integer', description: 'When it finished, milliseconds since the epoch.' },
    cutoff: { type: 'integer', description: 'Events with created < cutoff were deleted (milliseconds since the epoch).' },
    deleted: { type: 'integer', description: 'Events it deleted.' },
    batches: { type: 'integer', description: 'Batches (transactions) that deleted them.' },
    longest_batch_ms: { type: 'number', description: 'The longest a batch held the database writer, milliseconds.' },
  },
  required: ['started', 'finished', 'cutoff', 'deleted', 'batches', 'longest_batch_ms'],
} as const;

export const retentionSchema = {
  type: 'object',
  properties: {
    events_days: { type: ['integer', 'null'], description: eventsDaysDescription },
    last_deletion: lastDeletionSchema,
  },
  required: ['events_days', 'last_deletion'],
} as const;

/**
 * Retention of events (docs/retention.md). `serve` starts the sweeper once the broker runs (its
 * batches run in the ingest writer thread); it stops with the app.
 */
export function registerRetentionRoutes(app: FastifyInstance, ctx: ServerContext): void {
  app.addHook('onClose', async () => ctx.retention.close());
  getRetention(app, ctx);
  setRetention(app, ctx);
}

function getRetention(app: FastifyInstance, ctx: ServerContext): void {
  app.get<{ Params: { customer_id: string } }>('/:customer_id/retention', {
    config: { access: { permission: 'retention.read' } },
    schema: {
      operationId: 'getRetention',
      summary: 'How long the customer\'s events are kept, and the last deletion',
      description:
        'events_days: how many days events are kept (null: for ever, the default); last_deletion: the last finished deletion pass, read-only (docs/retention.md).',
      tags: ['retention'],
      params: customerParams,
      response: { 200: retentionSchema, ...errorResponses },
    },
    handler: async (request) => ctx.store.retention.get(request.params.customer_id),
  });
}

function setRetention(app: FastifyInstance, ctx: ServerContext): void {
  app.put<{ Params: { customer_id: string }; Body: { events_days: number | null } }>('/:customer_id/retention', {
    config: { access: { permission: 'retention.write' } },
    schema: {
      operationId: 'setRetention',
      summary: 'Set how long the customer\'s events are kept',
      description:
        'Events older than events_days days are deleted in small batches, soon after this call and every 10 minutes, while ingest and listing go on; null keeps them for ever. Answers the retention as stored. Recorded in the audit log (retention.set).',
      tags: ['retention'],
      params: customerParams,
      body: {
        type: 'object',
        properties: {
          events_days: { type: 'integer', nullable: true, minimum: 1, maximum: MAX_RETENTION_DAYS, description: eventsDaysDescription },
        },
        required: ['events_days'],
        additionalProperties: false,
      },
      response: { 200: retentionSchema, ...errorResponses },
    },
    handler: async (request) => {
      const customerId = request.params.customer_id;
      const eventsDays = request.body.events_days;
      const stored = await ctx.store.retention.set(customerId, eventsDays, ctx.clock(), (previous) =>
        auditEntry(ctx, request, 'retention.set', { type: 'retention', id: customerId }, { events_days: eventsDays, previous_events_days: previous }),
      );
      // A shorter period applies now, not at the next round.
      if (eventsDays !== null) ctx.retention.wake();
      return stored;
    },
  });
}
