import type { FastifyInstance } from 'fastify';
import {
  MAX_TIME_MILLIS,
  appliedFilters,
  nextPageToken,
  resolveEventListQuery,
  type EventListParams,
  type EventListQuery,
} from '../../domain/event-listing.js';
import type { ServerContext } from '../context.js';
import { badRequest } from '../errors.js';
import { withText } from '../event-text.js';
import { EventListStream } from '../event-stream.js';
import { customerParams, errorResponses, listOf } from '../schemas.js';

/** An event as the API shows it; absent fields are left out. Also the fast serializer's schema. */
export const eventSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    class: { type: 'string', description: 'event for scans and telemetry' },
    type: { type: 'string', enum: ['scan', 'telemetry'] },
    created: { type: 'integer', description: 'Milliseconds since the epoch.' },
    scan_code: { type: 'string' },
    scan_duration: { type: 'number' },
    scan_decode_symbology: { type: 'string' },
    device_id: { type: 'string' },
    device_battery: { type: 'number' },
    device_firmware: { type: 'string' },
    device_temperature: { type: 'number' },
    gateway_id: { type: 'string' },
    gateway_usecase: { type: 'string' },
    gateway_station: { type: 'string' },
    metrics_worker_steps: { type: 'number' },
  },
  required: ['id', 'class', 'type', 'created'],
} as const;

/** A time bound in milliseconds since the epoch (JavaScript's Date range). */
export const millisParameter = (description: string) =>
  ({ type: 'integer', minimum: 0, maximum: MAX_TIME_MILLIS, description }) as const;

/** `start_time_millis` and `end_time_millis`, shared by the list and the exports. */
export const rangeProperties = {
  start_time_millis: millisParameter('Start of the range, included (created >= start). Default: one day before the end.'),
  end_time_millis: millisParameter('End of the range, excluded (created < end). Default: now.'),
} as const;

function describe(query: EventListQuery): string {
  const gateway = query.gatewayId === undefined ? '' : ` of gateway ${query.gatewayId}`;
  return `Events${gateway} with ${new Date(query.start).toISOString()} <= created < ${new Date(query.end).toISOString()}, newest first`;
}

/** `GET /{customer_id}/events` (docs/events.md): keyset pages newest first, or one streamed response per gateway. */
export function registerEventRoutes(app: FastifyInstance, ctx: ServerContext): void {
  app.get<{ Params: { customer_id: string }; Querystring: EventListParams }>('/:customer_id/events', {
    config: { access: { permission: 'event.read' } },
    schema: {
      operationId: 'listEvents',
      summary: 'Events of the customer, newest first; pages of up to 500, or all events of one gateway in one streamed response',
      description:
        'Events with start_time_millis <= created < end_time_millis (default: the last 24 hours); links.next continues the query. With gateway_id, all events of that gateway in the range come in one streamed response.',
      tags: ['events'],
      params: customerParams,
      querystring: {
        type: 'object',
        properties: {
          ...rangeProperties,
          next_token: { type: 'string', minLength: 1, maxLength: 2048, description: 'From links.next: continues the query of the previous page.' },
          next_key: { type: 'string', minLength: 1, maxLength: 2048, deprecated: true, description: 'Deprecated name of next_token.' },
          limit: { type: 'integer', minimum: 1, maximum: 500, description: 'Events per page, 1..500. Default 500, or the limit of next_token.' },
          gateway_id: {
            type: 'string',
            minLength: 1,
            maxLength: 200,
            description: 'Only events of this gateway: the whole range in one streamed response, without pagination (limit does not apply).',
          },
        },
        additionalProperties: false,
      },
      response: { 200: listOf(eventSchema, 'A page of events'), ...errorResponses },
    },
    handler: async (request, reply) => {
      const customerId = request.params.customer_id;
      const query = resolveEventListQuery(request.query, customerId, ctx.clock());
      if ('invalid' in query) throw badRequest(query.invalid);
      const description = describe(query);
      const filters = appliedFilters(query);

      const gatewayId = query.gatewayId;
      if (gatewayId !== undefined) {
        const stream = new EventListStream(
          (before, limit, prefix) => ctx.store.events.gatewayNewestBefore(customerId, gatewayId, query.start, before, limit, prefix),
          query.before,
          (size) => ({ description, size, filters }),
        );
        return reply.type('application/json; charset=utf-8').send(stream);
      }

      const items = await ctx.store.events.newestBefore(customerId, query.start, query.before, query.limit, '{"items":[');
      const links =
        items.more && items.last ? { next: `/${encodeURIComponent(customerId)}/events?next_token=${nextPageToken(customerId, query, items.last)}` } : {};
      // SQLite writes the page's start and its items as JSON bytes (see store/sqlite/event-json.ts); the
      // rest goes behind them: no serializer and no re-encoding walks 500 events again.
      const tail = `],"links":${JSON.stringify(links)},"metadata":${JSON.stringify({ description, size: items.count, filters })}}`;
      return reply.type('application/json; charset=utf-8').send(withText(items, tail));
    },
  });
}
