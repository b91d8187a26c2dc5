import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { newWebhookSecret } from '../../domain/webhook-signature.js';
import { DELIVERIES_KEPT, WEBHOOK_TEST_TYPE } from '../../domain/webhooks.js';
import { MAX_TIME_MILLIS } from '../../domain/event-listing.js';
import type { WebhookRecord } from '../../store/ports/index.js';
import { auditEntry } from '../audit.js';
import type { ServerContext } from '../context.js';
import { badRequest, notFound } from '../errors.js';
import { errorResponses, listBody, listOf } from '../schemas.js';
import { deliverySchema, toDeliveryView, toWebhook, webhookWithSecretSchema } from '../webhook-view.js';
import { webhookChanged, webhookOf, webhookParams } from './webhooks.js';

const ACCESS = { access: { permission: 'webhook.write' } } as const;
type WebhookParams = { customer_id: string; webhook_id: string };

/** What a webhook is asked to do: a test message, its deliveries, a replay, a new secret (docs/webhooks.md). */
export function registerWebhookActionRoutes(app: FastifyInstance, ctx: ServerContext): void {
  testWebhook(app, ctx);
  listDeliveries(app, ctx);
  replayWebhook(app, ctx);
  rotateSecret(app, ctx);
}

function testWebhook(app: FastifyInstance, ctx: ServerContext): void {
  app.post<{ Params: WebhookParams }>('/:customer_id/webhooks/:webhook_id/test', {
    config: ACCESS,
    schema: {
      operationId: 'testWebhook',
      summary: 'Send a webhook.test message',
      description: 'Queues one signed message of type webhook.test behind what the webhook has pending; its delivery is in the answer and in the deliveries list.',
      tags: ['webhooks'],
      params: webhookParams,
      response: { 202: deliverySchema, ...errorResponses },
      refusals: { 404: 'No webhook with this id in the customer.' },
    },
    handler: async (request, reply) => {
      const webhook = await webhookOf(ctx, request.params);
      const now = ctx.clock();
      const delivery = {
        id: randomUUID(),
        webhook_id: webhook.id,
        customer_id: webhook.customer_id,
        type: WEBHOOK_TEST_TYPE,
        created: now,
        from: null,
        upto: null,
        payload: JSON.stringify({ webhook_id: webhook.id, message: 'A test message from scanhub: the webhook receives and verifies messages.' }),
      };
      await ctx.store.webhooks.enqueue(delivery);
      await webhookChanged(ctx, webhook.id);
      return reply.code(202).send(toDeliveryView({ ...delivery, attempts: 0, status: 'PENDING', response_status: null, latency_ms: null, next_attempt: null }));
    },
  });
}

function listDeliveries(app: FastifyInstance, ctx: ServerContext): void {
  app.get<{ Params: WebhookParams; Querystring: { limit: number } }>('/:customer_id/webhooks/:webhook_id/deliveries', {
    config: ACCESS,
    schema: {
      operationId: 'listWebhookDeliveries',
      summary: 'The webhook\'s deliveries, newest first',
      description: `Each message sent or to send, with the outcome of its last attempt. The newest ${DELIVERIES_KEPT} are kept (and every pending one), so one page of the largest limit holds them all.`,
      tags: ['webhooks'],
      params: webhookParams,
      querystring: { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: DELIVERIES_KEPT, default: 100 } } },
      response: { 200: listOf(deliverySchema, 'List of deliveries'), ...errorResponses },
      refusals: { 404: 'No webhook with this id in the customer.' },
    },
    handler: async (request) => {
      const webhook = await webhookOf(ctx, request.params);
      const deliveries = await ctx.store.webhooks.deliveries(webhook.customer_id, webhook.id, request.query.limit);
      return listBody(deliveries.map(toDeliveryView), 'Deliveries of the webhook, newest first', undefined);
    },
  });
}

function replayWebhook(app: FastifyInstance, ctx: ServerContext): void {
  app.post<{ Params: WebhookParams; Body: { since: number } }>('/:customer_id/webhooks/:webhook_id/replay', {
    config: ACCESS,
    schema: {
      operationId: 'replayWebhook',
      summary: 'Send the events again from a time',
      description:
        'Moves the webhook\'s cursor back to just before the first event (in commit order) created at or after since: that event and every one committed after it are sent again, in order. Receivers tell repeats by the events\' ids.',
      tags: ['webhooks'],
      params: webhookParams,
      body: {
        type: 'object',
        properties: { since: { type: 'integer', minimum: 0, maximum: MAX_TIME_MILLIS, description: 'Milliseconds since the epoch.' } },
        required: ['since'],
        additionalProperties: false,
      },
      response: {
        202: { type: 'object', properties: { webhook_id: { type: 'string' }, since: { type: 'integer' } }, required: ['webhook_id', 'since'] },
        ...errorResponses,
      },
      refusals: { 400: 'since is in the future.', 404: 'No webhook with this id in the customer.' },
    },
    handler: async (request, reply) => {
      const { since } = request.body;
      if (since > ctx.clock()) throw badRequest(`Body field "since" (${new Date(since).toISOString()}) is in the future: give a past time in milliseconds since the epoch.`);
      const { customer_id, webhook_id } = request.params;
      const cursor = await ctx.store.eventLog.before(customer_id, since);
      const audit = (webhook: WebhookRecord) => auditEntry(ctx, request, 'webhook.replayed', { type: 'webhook', id: webhook.id }, { since });
      if (!(await ctx.store.webhooks.moveCursor(customer_id, webhook_id, cursor, ctx.clock(), audit))) throw notFound(`Webhook "${webhook_id}" does not exist.`);
      await webhookChanged(ctx, webhook_id);
      return reply.code(202).send({ webhook_id, since });
    },
  });
}

function rotateSecret(app: FastifyInstance, ctx: ServerContext): void {
  app.post<{ Params: WebhookParams }>('/:customer_id/webhooks/:webhook_id/rotate-secret', {
    config: ACCESS,
    schema: {
      operationId: 'rotateWebhookSecret',
      summary: 'Give a webhook a new secret (shown once); the old one signs too for 24 h',
      description:
        'Every message carries two v1 signatures, of the new and of the previous secret, for 24 hours, so the receiver can switch to the new secret at any time within them.',
      tags: ['webhooks'],
      params: webhookParams,
      response: { 200: webhookWithSecretSchema, ...errorResponses },
      refusals: { 404: 'No webhook with this id in the customer.' },
    },
    handler: async (request) => {
      const { customer_id, webhook_id } = request.params;
      const now = ctx.clock();
      const secret = newWebhookSecret();
      const audit = (webhook: WebhookRecord) => auditEntry(ctx, request, 'webhook.secret_rotated', { type: 'webhook', id: webhook.id });
      const rotated = await ctx.store.webhooks.rotateSecret(customer_id, webhook_id, secret, now + ctx.config.webhookPreviousSecretMs, now, audit);
      if (!rotated) throw notFound(`Webhook "${webhook_id}" does not exist.`);
      await webhookChanged(ctx, webhook_id);
      return { ...toWebhook(rotated), secret };
    },
  });
}
