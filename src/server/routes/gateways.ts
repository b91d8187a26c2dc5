import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { GatewayNameTaken, type GatewayChanges, type NewGateway } from '../../store/ports/index.js';
import { auditEntry } from '../audit.js';
import type { ServerContext } from '../context.js';
import { createdIdPage, type CreatedIdList } from '../created-id-pages.js';
import { badRequest, conflict, notFound } from '../errors.js';
import { customerParams, errorResponses, limitParameter, listBody, listOf } from '../schemas.js';
import { checkGatewayText, etagOf, gatewayFields, gatewaySchema, parseIfMatch, toApiGateway } from '../gateway-view.js';

const GATEWAY_LIST: CreatedIdList = { segment: 'gateways', noun: 'gateway' };

/** The 404 of a gateway reference that names none, in the OpenAPI document. */
export const NO_GATEWAY = 'No gateway with this id or thing name in the customer.';

/** At most this many gateways per bulk-create call. */
export const BULK_CREATE_MAX = 500;

export const gatewayParams = {
  type: 'object',
  properties: {
    customer_id: { type: 'string' },
    gateway_id: { type: 'string', description: 'The gateway id or, equally, its thing name.' },
  },
  required: ['customer_id', 'gateway_id'],
} as const;

const newGatewayBody = {
  type: 'object',
  properties: gatewayFields,
  required: ['usecase', 'station', 'name'],
  additionalProperties: false,
} as const;

const etagHeader = { ETag: { type: 'string', description: 'The gateway version, quoted; send it back in If-Match.' } };

type GatewayParams = { customer_id: string; gateway_id: string };

function checkNewGateway(body: Omit<NewGateway, 'id'>, prefix = ''): void {
  for (const field of ['name', 'usecase', 'station'] as const) checkGatewayText(prefix + field, body[field]);
}

function nameTaken(error: GatewayNameTaken) {
  const names = error.names.map((n) => `"${n}"`).join(', ');
  return conflict(
    error.names.length === 1 ? `A gateway named ${names} already exists.` : `Gateways named ${names} already exist.`,
  );
}

/** The names that occur more than once in a list, each named once. */
export function duplicateNames(names: string[]): string[] {
  return [...new Set(names.filter((n, i) => names.indexOf(n) !== i))];
}

/** The customer's gateway (by id or thing name), or 404. */
async function gatewayOf(ctx: ServerContext, customerId: string, gatewayId: string) {
  const gateway = await ctx.store.gateways.byId(customerId, gatewayId);
  if (!gateway) throw notFound(`Gateway "${gatewayId}" does not exist.`);
  return gateway;
}

/** Gateways (docs/gateways.md): list, create, bulk-create, get, update, and delete (an addition). */
export function registerGatewayRoutes(app: FastifyInstance, ctx: ServerContext): void {
  listGateways(app, ctx);
  createGateway(app, ctx);
  bulkCreateGateways(app, ctx);
  getGateway(app, ctx);
  updateGateway(app, ctx);
  deleteGateway(app, ctx);
}

function listGateways(app: FastifyInstance, ctx: ServerContext): void {
  app.get<{ Params: { customer_id: string }; Querystring: { next_token?: string; limit: number } }>('/:customer_id/gateways', {
    config: { access: { permission: 'gateway.read' } },
    schema: {
      operationId: 'listGateways',
      summary: 'Gateways of the customer, oldest first, paginated',
      description: 'Up to limit gateways per page, each with its connectivity status; links.next continues the list.',
      tags: ['gateways'],
      params: customerParams,
      querystring: { type: 'object', properties: { next_token: { type: 'string' }, limit: limitParameter } },
      response: { 200: listOf(gatewaySchema, 'List of gateways'), ...errorResponses },
    },
    handler: async (request) => {
      const { page, next } = await createdIdPage(GATEWAY_LIST, request.params.customer_id, request.query, (after, limit) =>
        ctx.store.gateways.page(request.params.customer_id, after, limit),
      );
      const now = ctx.clock();
      return listBody(page.map((g) => toApiGateway(g, now)), 'Gateways of the customer', next);
    },
  });
}

function createGateway(app: FastifyInstance, ctx: ServerContext): void {
  app.post<{ Params: { customer_id: string }; Body: Omit<NewGateway, 'id'> }>('/:customer_id/gateways', {
    config: { access: { permission: 'gateway.write' } },
    schema: {
      operationId: 'createGateway',
      summary: 'Create a gateway (name unique per customer)',
      description: 'The ETag is its version, for If-Match on a later change. Bring the device on next with prepare-provisioning or create-provisioning-package.',
      tags: ['gateways'],
      params: customerParams,
      body: newGatewayBody,
      response: { 201: { ...gatewaySchema, headers: etagHeader }, ...errorResponses },
      refusals: { 409: 'A gateway of this name already exists.' },
    },
    handler: async (request, reply) => {
      checkNewGateway(request.body);
      const { name, usecase, station } = request.body;
      try {
        const id = randomUUID();
        const audit = [auditEntry(ctx, request, 'gateway.created', { type: 'gateway', id }, { name })];
        const [gateway] = await ctx.store.gateways.createAll(request.params.customer_id, [{ id, name, usecase, station }], ctx.clock(), audit);
        return reply.code(201).header('etag', etagOf(gateway!)).send(toApiGateway(gateway!, ctx.clock()));
      } catch (error) {
        if (error instanceof GatewayNameTaken) throw nameTaken(error);
        throw error;
      }
    },
  });
}

function bulkCreateGateways(app: FastifyInstance, ctx: ServerContext): void {
  app.post<{ Params: { customer_id: string }; Body: { gateways: Omit<NewGateway, 'id'>[] } }>('/:customer_id/gateways/bulk-create', {
    config: { access: { permission: 'gateway.write' } },
    schema: {
      operationId: 'bulkCreateGateways',
      summary: `Create 1..${BULK_CREATE_MAX} gateways at once: all of them or none`,
      description: 'In one transaction: when one gateway is refused, none is created.',
      tags: ['gateways'],
      params: customerParams,
      body: {
        type: 'object',
        properties: { gateways: { type: 'array', minItems: 1, maxItems: BULK_CREATE_MAX, items: newGatewayBody } },
        required: ['gateways'],
        additionalProperties: false,
      },
      response: { 201: { type: 'array', items: gatewaySchema }, ...errorResponses },
      refusals: { 409: 'A name repeats in the list or belongs to an existing gateway.' },
    },
    handler: async (request, reply) => {
      const { gateways } = request.body;
      gateways.forEach((g, i) => checkNewGateway(g, `gateways.${i}.`));
      const repeated = duplicateNames(gateways.map((g) => g.name));
      if (repeated.length) {
        throw conflict(`Gateway names must be unique: ${repeated.map((n) => `"${n}"`).join(', ')} appear${repeated.length === 1 ? 's' : ''} more than once in this request.`);
      }
      try {
        const now = ctx.clock();
        const fresh = gateways.map((g) => ({ id: randomUUID(), name: g.name, usecase: g.usecase, station: g.station }));
        const audit = fresh.map((g) => auditEntry(ctx, request, 'gateway.created', { type: 'gateway', id: g.id }, { name: g.name }));
        const created = await ctx.store.gateways.createAll(request.params.customer_id, fresh, now, audit);
        return reply.code(201).send(created.map((g) => toApiGateway(g, now)));
      } catch (error) {
        if (error instanceof GatewayNameTaken) throw nameTaken(error);
        throw error;
      }
    },
  });
}

function getGateway(app: FastifyInstance, ctx: ServerContext): void {
  app.get<{ Params: GatewayParams }>('/:customer_id/gateways/:gateway_id', {
    config: { access: { permission: 'gateway.read' } },
    schema: {
      operationId: 'getGateway',
      summary: 'One gateway, by id or thing name',
      description: 'The ETag is its version, for If-Match on a later change.',
      tags: ['gateways'],
      params: gatewayParams,
      response: { 200: { ...gatewaySchema, headers: etagHeader }, ...errorResponses },
      refusals: { 404: NO_GATEWAY },
    },
    handler: async (request, reply) => {
      const gateway = await gatewayOf(ctx, request.params.customer_id, request.params.gateway_id);
      return reply.header('etag', etagOf(gateway)).send(toApiGateway(gateway, ctx.clock()));
    },
  });
}

function updateGateway(app: FastifyInstance, ctx: ServerContext): void {
  app.patch<{ Params: GatewayParams; Body: GatewayChanges; Headers: { 'if-match'?: string } }>('/:customer_id/gateways/:gateway_id', {
    config: { access: { permission: 'gateway.write' } },
    schema: {
      operationId: 'updateGateway',
      summary: 'Change name, usecase or station; with If-Match, only if nobody changed it meanwhile',
      description: 'Changes the fields sent. With If-Match (the ETag last read) a change made meanwhile is not overwritten: 409. The ETag of the answer is the new version.',
      tags: ['gateways'],
      params: gatewayParams,
      headers: { type: 'object', properties: { 'if-match': { type: 'string' } } },
      body: { type: 'object', properties: gatewayFields, additionalProperties: false },
      response: { 200: { ...gatewaySchema, headers: etagHeader }, ...errorResponses },
      refusals: { 404: NO_GATEWAY, 409: 'The gateway changed since the If-Match version, or the new name is taken.' },
    },
    handler: async (request, reply) => {
      const { customer_id, gateway_id } = request.params;
      const changes = request.body;
      if (Object.keys(changes).length === 0) {
        throw badRequest('The request body changes nothing: send at least one of "name", "usecase", "station".');
      }
      for (const field of ['name', 'usecase', 'station'] as const) checkGatewayText(field, changes[field]);
      const expected = parseIfMatch(request.headers['if-match']);
      const outcome = await ctx.store.gateways.update(customer_id, gateway_id, changes, expected, ctx.clock());
      if (outcome === 'missing') throw notFound(`Gateway "${gateway_id}" does not exist.`);
      if (outcome === 'stale') {
        const current = await ctx.store.gateways.byId(customer_id, gateway_id);
        throw conflict(
          `Gateway "${gateway_id}" was changed meanwhile: its ETag is now ${current ? etagOf(current) : 'different'}, not ${request.headers['if-match']}; read it again and retry.`,
        );
      }
      if (outcome === 'name-taken') throw conflict(`A gateway named "${changes.name}" already exists.`);
      return reply.header('etag', etagOf(outcome)).send(toApiGateway(outcome, ctx.clock()));
    },
  });
}

function deleteGateway(app: FastifyInstance, ctx: ServerContext): void {
  app.delete<{ Params: GatewayParams }>('/:customer_id/gateways/:gateway_id', {
    config: { access: { permission: 'gateway.write' } },
    schema: {
      operationId: 'deleteGateway',
      summary: 'Delete a gateway: its certificate is refused from then on and its name is free again',
      description: 'The MQTT broker refuses the gateway\'s certificate from the next connection on.',
      tags: ['gateways'],
      params: gatewayParams,
      response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses },
      refusals: { 404: NO_GATEWAY },
    },
    handler: async (request, reply) => {
      const { customer_id, gateway_id } = request.params;
      const audit = auditEntry(ctx, request, 'gateway.deleted', { type: 'gateway', id: gateway_id.toLowerCase() });
      if (!(await ctx.store.gateways.markDeleted(customer_id, gateway_id, ctx.clock(), audit))) throw notFound(`Gateway "${gateway_id}" does not exist.`);
      return reply.code(204).send();
    },
  });
}
