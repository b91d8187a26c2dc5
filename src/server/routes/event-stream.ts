import type { FastifyInstance } from 'fastify';
import { comparePositions, decodeCursor, type StreamPosition } from '../../domain/stream-cursor.js';
import { principalOf, refusalNow } from '../access.js';
import { CONCURRENCY_LIMITS, CONCURRENCY_RETRY_AFTER_SECONDS } from '../../domain/rate-limits.js';
import { TooManyStreams } from '../live-events/live-events.js';
import type { ServerContext } from '../context.js';
import { badRequest, tooManyRequests } from '../errors.js';
import { customerParams, errorResponses } from '../schemas.js';

/** `Last-Event-ID` as the stream reads it: absent, or empty (what EventSource means by no id), is a start from now. */
function lastEventId(header: string | string[] | undefined): string | undefined {
  const text = (Array.isArray(header) ? header.join(',') : header)?.trim();
  return text ? text : undefined;
}

/**
 * `GET /{customer_id}/events/stream` (docs/events.md "Live events"): the customer's events as
 * Server-Sent Events in commit order, from now or after `Last-Event-ID`.
 */
export function registerEventStreamRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const live = ctx.liveEvents;
  app.addHook('onReady', async () => {
    live.log = app.log.child({ component: 'live-events' });
  });
  // Before the server waits for its connections to end: every stream ends now, saying where to resume.
  app.addHook('preClose', async () => live.close());

  app.get<{ Params: { customer_id: string }; Querystring: { gateway_id?: string; alerts?: boolean; events?: boolean } }>('/:customer_id/events/stream', {
    config: { access: { permission: 'event.read' } },
    schema: {
      operationId: 'streamEvents',
      summary: 'New events of the customer as they are stored: a Server-Sent Events stream in commit order, resumable with Last-Event-ID',
      description:
        'Server-Sent Events (text/event-stream), read with EventSource or fetch: each event as it is stored, in commit order, its cursor as `id:`. A client that reconnects with `Last-Event-ID` gets every event after that id, none twice. A client that does not read is cut off with a last comment naming the id to resume from.',
      tags: ['events'],
      params: customerParams,
      querystring: {
        type: 'object',
        properties: {
          gateway_id: { type: 'string', minLength: 1, maxLength: 200, description: 'Only events of this gateway (its id, as events carry it).' },
          alerts: {
            type: 'boolean',
            default: false,
            description: 'Also each alert of the customer as it opens or resolves: an `event: alert` frame without an id, `data:` the alert as in GET /{customer_id}/alerts (docs/alerts.md).',
          },
          events: {
            type: 'boolean',
            default: true,
            description: 'false with alerts=true: the alert frames and heartbeats only, no event (a board that shows open alerts need not receive every scan).',
          },
        },
        additionalProperties: false,
      },
      headers: {
        type: 'object',
        properties: {
          'last-event-id': {
            type: 'string',
            description: 'The id of the last event received: the stream goes on after it, with no gap and no duplicate. Without it, the stream starts with events stored from now on.',
          },
        },
      },
      response: {
        200: {
          description:
            'text/event-stream: one event per stored event (`id:` its cursor, `data:` its JSON as in GET /{customer_id}/events), a `: heartbeat` comment every 15 s, and a last comment when the server ends the stream (`: too slow, resume with Last-Event-ID <id>`, `: server shutting down, ...`).',
          content: { 'text/event-stream': { schema: { type: 'string' } } },
        },
        ...errorResponses,
      },
      refusals: {
        400: 'gateway_id is malformed, events=false without alerts=true, or Last-Event-ID is not the id of an event of this customer\'s stream (or names a position past every stored event).',
        429: `The user holds ${CONCURRENCY_LIMITS.liveStreamsPerUser} live streams on this instance already; Retry-After says when to try again.`,
      },
    },
    handler: async (request, reply) => {
      const customerId = request.params.customer_id;
      if (request.query.events === false && request.query.alerts !== true) {
        throw badRequest('Query "events=false" without "alerts=true" asks for a stream of nothing: add alerts=true for the alerts alone, or leave events out.');
      }
      const resumedFrom = lastEventId(request.headers['last-event-id']);
      let from: StreamPosition | undefined;
      if (resumedFrom !== undefined) {
        const position = decodeCursor(live.key, customerId, resumedFrom);
        if (!position || !ctx.store.eventLog.isPosition(position)) {
          throw badRequest(`Header "Last-Event-ID" is not the id of an event of customer "${customerId}"'s stream: send the id of the last event received as it came, or leave the header out to start from now.`);
        }
        if (comparePositions(position, await ctx.store.eventLog.frontier()) > 0) {
          throw badRequest('Header "Last-Event-ID" names a position past every event stored here (was the database restored from an older backup?): leave the header out to start from now.');
        }
        from = position;
      }
      reply
        .type('text/event-stream; charset=utf-8')
        .header('cache-control', 'no-cache, no-transform')
        // A proxy such as nginx must pass each event on at once.
        .header('x-accel-buffering', 'no')
        // The response ends only when the server ends the stream (cut off, shutdown): the connection then goes with it.
        .header('connection', 'close');
      // HEAD (which fastify answers with this handler) gets the headers of a stream, and no stream.
      if (request.method === 'HEAD') return reply.send();
      const holder = { id: principalOf(request).user.id, limit: CONCURRENCY_LIMITS.liveStreamsPerUser };
      let stream;
      try {
        stream = await live.open(customerId, request.query.gateway_id, from, resumedFrom, () => refusalNow(ctx, request), holder, { alerts: request.query.alerts === true, events: request.query.events !== false });
      } catch (error) {
        if (!(error instanceof TooManyStreams)) throw error;
        throw tooManyRequests(
          `You have ${error.limit} live event streams open on this server, as many as a user may: close one (or reuse it with a gateway filter on the client's side) before opening another.`,
          CONCURRENCY_RETRY_AFTER_SECONDS,
        );
      }
      return reply.send(stream);
    },
  });
}
