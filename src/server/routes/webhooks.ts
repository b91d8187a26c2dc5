import { randomUUID } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { newWebhookSecret } from '../../domain/webhook-signature.js';
import { WEBHOOK_EVENT_TYPES, checkWebhookUrl, refusedAddress } from '../../domain/webhooks.js';
import type { WebhookChange, WebhookRecord } from '../../store/ports/index.js';
import { auditEntry } from '../audit.js';
import type { ServerContext } from '../context.js';
import { createdIdPage, type CreatedIdList } from '../created-id-pages.js';
import { badRequest, notFound } from '../errors.js';
import { customerParams, errorResponses, limitParameter, listBody, listOf } from '../schemas.js';
import { toWebhook, webhookSchema, webhookWithSecretSchema } from '../webhook-view.js';

const WEBHOOK_LIST: CreatedIdList = { segment: 'webhooks', noun: 'webhook' };
const ACCESS = { access: { permission: 'webhook.write' } } as const;

export const webhookParams = {
  type: 'object',
  properties: { customer_id: { type: 'string' }, webhook_id: { type: 'string' } },
  required: ['customer_id', 'webhook_id'],
} as const;

const editable = {
  url: { type: 'string', minLength: 1, maxLength: 2048 },
  event_types: { type: 'array', items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] }, minItems: 1, uniqueItems: true },
  description: { type: 'string', maxLength: 500 },
  enabled: { type: 'boolean' },
} as const;

interface WebhookBody {
  url?: string;
  event_types?: string[];
  description?: string;
  enabled?: boolean;
}

type WebhookParams = { customer_id: string; webhook_id: string };

/**
 * The URL as the rules allow it (docs/webhooks.md "URLs"), or a 400 naming why not: its form, and
 * the addresses its host resolves to now (checked again at every connection).
 */
async function allowedUrl(ctx: ServerContext, text: string): Promise<string> {
  const allowLoopback = ctx.config.webhookAllowLoopback;
  const checked = checkWebhookUrl(text, allowLoopback);
  if (!checked.ok) throw badRequest(`Body field "url" is refused: ${checked.reason}.`);
  if (isIP(checked.host) === 0) {
    // A name that does not resolve now may later: deliveries retry. One that resolves to a refused address is refused now.
    const addresses = await lookup(checked.host, { all: true, verbatim: true }).catch(() => []);
    for (const { address } of addresses) {
      const refused = refusedAddress(address, allowLoopback);
      if (refused) throw badRequest(`Body field "url" is refused: its host ${checked.host} resolves to ${refused}.`);
    }
  }
  return checked.url.href;
}

/** The webhook of the path, or a 404 naming it. */
export async function webhookOf(ctx: ServerContext, params: WebhookParams): Promise<WebhookRecord> {
  const webhook = await ctx.store.webhooks.get(params.customer_id, params.webhook_id);
  if (!webhook) throw notFound(`Webhook "${params.webhook_id}" does not exist.`);
  return webhook;
}

/** Tells the instance that delivers the webhook (or may take it) to look again. */
export function webhookChanged(ctx: ServerContext, webhookId: string): Promise<void> {
  return ctx.store.signals.publish({ kind: 'webhook-changed', webhook_id: webhookId });
}

/** Webhooks (docs/webhooks.md): create, list, read, change, delete; app.ts registers the actions of webhook-actions.ts beside them. */
export function registerWebhookRoutes(app: FastifyInstance, ctx: ServerContext): void {
  createWebhook(app, ctx);
  listWebhooks(app, ctx);
  readWebhook(app, ctx);
  updateWebhook(app, ctx);
  deleteWebhook(app, ctx);
}

function createWebhook(app: FastifyInstance, ctx: ServerContext): void {
  app.post<{ Params: { customer_id: string }; Body: WebhookBody & { url: string; event_types: string[] } }>('/:customer_id/webhooks', {
    config: ACCESS,
    schema: {
      operationId: 'createWebhook',
      summary: 'Create a webhook (its secret shown once)',
      description:
        'Messages of the subscribed types are POSTed to the URL, signed the Standard Webhooks way with the secret in this answer (shown only here). Events are sent from now on, in batches of up to 500, in commit order, at least once.',
      tags: ['webhooks'],
      params: customerParams,
      body: { type: 'object', properties: editable, required: ['url', 'event_types'], additionalProperties: false },
      response: { 201: webhookWithSecretSchema, ...errorResponses },
      refusals: { 400: 'A URL that is not http(s), carries credentials, or names (or resolves to) a link-local, unspecified or, without serve --webhook-allow-loopback, loopback address; an unknown event type.' },
    },
    handler: async (request, reply) => {
      const now = ctx.clock();
      const webhook: WebhookRecord = {
        id: randomUUID(),
        customer_id: request.params.customer_id,
        url: await allowedUrl(ctx, request.body.url),
        event_types: request.body.event_types,
        description: request.body.description ?? '',
        enabled: request.body.enabled ?? true,
        secret: newWebhookSecret(),
        previous_secret: null,
        previous_until: null,
        created: now,
        last_updated: now,
        // From now on: nothing committed before the webhook existed is sent (a replay sends older events).
        cursor: await ctx.store.eventLog.head(),
        failing_since: null,
        disabled_reason: null,
      };
      const audit = auditEntry(ctx, request, 'webhook.created', { type: 'webhook', id: webhook.id }, { url: webhook.url, event_types: webhook.event_types });
      await ctx.store.webhooks.create(webhook, audit);
      await webhookChanged(ctx, webhook.id);
      return reply.code(201).send({ ...toWebhook(webhook), secret: webhook.secret });
    },
  });
}

function listWebhooks(app: FastifyInstance, ctx: ServerContext): void {
  app.get<{ Params: { customer_id: string }; Querystring: { next_token?: string; limit: number } }>('/:customer_id/webhooks', {
    config: ACCESS,
    schema: {
      operationId: 'listWebhooks',
      summary: 'Webhooks of the customer, oldest first, paginated',
      description: 'Every webhook of the customer, enabled or not, without secrets; up to limit per page, links.next continues the list.',
      tags: ['webhooks'],
      params: customerParams,
      querystring: { type: 'object', properties: { next_token: { type: 'string' }, limit: limitParameter } },
      response: { 200: listOf(webhookSchema, 'List of webhooks'), ...errorResponses },
    },
    handler: async (request) => {
      const { page, next } = await createdIdPage(WEBHOOK_LIST, request.params.customer_id, request.query, (after, limit) =>
        ctx.store.webhooks.page(request.params.customer_id, after, limit),
      );
      return listBody(page.map(toWebhook), 'Webhooks of the customer', next);
    },
  });
}

function readWebhook(app: FastifyInstance, ctx: ServerContext): void {
  app.get<{ Params: WebhookParams }>('/:customer_id/webhooks/:webhook_id', {
    config: ACCESS,
    schema: {
      operationId: 'getWebhook',
      summary: 'One webhook',
      description: 'The webhook without its secret (shown only when it was created or rotated).',
      tags: ['webhooks'],
      params: webhookParams,
      response: { 200: webhookSchema, ...errorResponses },
      refusals: { 404: 'No webhook with this id in the customer.' },
    },
    handler: async (request) => toWebhook(await webhookOf(ctx, request.params)),
  });
}

function updateWebhook(app: FastifyInstance, ctx: ServerContext): void {
  app.patch<{ Params: WebhookParams; Body: WebhookBody }>('/:customer_id/webhooks/:webhook_id', {
    config: ACCESS,
    schema: {
      operationId: 'updateWebhook',
      summary: 'Change a webhook\'s URL, types, description, or enable it again',
      description: 'Only the fields given change. Enabling a webhook the service disabled clears its reason and resumes delivery from where it stopped: no event is lost.',
      tags: ['webhooks'],
      params: webhookParams,
      body: { type: 'object', properties: editable, additionalProperties: false, minProperties: 1 },
      response: { 200: webhookSchema, ...errorResponses },
      refusals: { 400: 'A URL the rules refuse, an unknown event type, or an empty body.', 404: 'No webhook with this id in the customer.' },
    },
    handler: async (request) => {
      const change: WebhookChange = { ...request.body };
      if (request.body.url !== undefined) change.url = await allowedUrl(ctx, request.body.url);
      const audit = (webhook: WebhookRecord) => auditEntry(ctx, request, 'webhook.updated', { type: 'webhook', id: webhook.id }, { fields: Object.keys(request.body).sort() });
      const updated = await ctx.store.webhooks.update(request.params.customer_id, request.params.webhook_id, change, ctx.clock(), audit);
      if (!updated) throw notFound(`Webhook "${request.params.webhook_id}" does not exist.`);
      await webhookChanged(ctx, updated.id);
      return toWebhook(updated);
    },
  });
}

function deleteWebhook(app: FastifyInstance, ctx: ServerContext): void {
  app.delete<{ Params: WebhookParams }>('/:customer_id/webhooks/:webhook_id', {
    config: ACCESS,
    schema: {
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook and its deliveries',
      description: 'Nothing more is sent to it, from any instance; its pending deliveries are dropped.',
      tags: ['webhooks'],
      params: webhookParams,
      response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses },
      refusals: { 404: 'No webhook with this id in the customer.' },
    },
    handler: async (request, reply) => {
      const audit = (webhook: WebhookRecord) => auditEntry(ctx, request, 'webhook.deleted', { type: 'webhook', id: webhook.id }, { url: webhook.url });
      if (!(await ctx.store.webhooks.delete(request.params.customer_id, request.params.webhook_id, audit))) {
        throw notFound(`Webhook "${request.params.webhook_id}" does not exist.`);
      }
      await webhookChanged(ctx, request.params.webhook_id);
      return reply.code(204).send();
    },
  });
}
