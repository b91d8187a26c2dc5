import type { FastifyInstance, FastifyRequest } from 'fastify';
import { timeOrderedUuid } from '../../domain/command-ids.js';
import {
  COMMAND_NAME,
  COMMAND_STATUSES,
  DEFAULT_TTL_SECONDS,
  MAX_BULK_COMMANDS,
  MAX_TTL_SECONDS,
  commandInputProblem,
  expiryOf,
  statusAt,
  toApiCommand,
  type CommandInput,
} from '../../domain/commands.js';
import { UnknownGateways, type CommandRecord, type NewCommand } from '../../store/ports/index.js';
import { auditEntry } from '../audit.js';
import type { ServerContext } from '../context.js';
import { createdIdPage } from '../created-id-pages.js';
import { badRequest, conflict, notFound } from '../errors.js';
import { customerParams, errorResponses, limitParameter, listBody, listOf } from '../schemas.js';
import { NO_GATEWAY, gatewayParams } from './gateways.js';

const PERMISSION = { access: { permission: 'gateway.command' } } as const;

const commandSchema = {
  type: 'object',
  properties: {
    command_id: { type: 'string', format: 'uuid' },
    gateway_id: { type: 'string', format: 'uuid' },
    device_id: { type: ['string', 'null'], description: 'The scanner the command is for; null: the gateway itself.' },
    name: { type: 'string' },
    parameters: { type: 'object', additionalProperties: true },
    status: {
      type: 'string',
      enum: [...COMMAND_STATUSES],
      description: 'QUEUED until the gateway acknowledges it (DELIVERED), then SUCCEEDED or FAILED as it reports; EXPIRED past expires_at; CANCELED.',
    },
    created: { type: 'integer', description: 'Milliseconds since the epoch.' },
    last_updated: { type: 'integer', description: 'Milliseconds since the epoch.' },
    expires_at: { type: 'integer', description: 'Milliseconds since the epoch: not sent, and no longer completed, from then on.' },
    delivered_at: { type: 'integer', description: 'When the gateway acknowledged it (PUBACK).' },
    completed_at: { type: 'integer', description: 'When the gateway reported SUCCEEDED or FAILED.' },
    details: { type: 'string', description: 'What the gateway reported with its outcome.' },
  },
  required: ['command_id', 'gateway_id', 'device_id', 'name', 'parameters', 'status', 'created', 'last_updated', 'expires_at'],
} as const;

const inputFields = {
  name: { type: 'string', minLength: 1, maxLength: 64, description: `The command, matching ${COMMAND_NAME.source}; well known: feedback, display, configure.` },
  device_id: { type: 'string', minLength: 1, maxLength: 200, description: 'The scanner it is for, when not the gateway itself.' },
  parameters: {
    type: 'object',
    additionalProperties: true,
    description: 'At most 16 KiB as JSON. feedback: { "sequence": "OK"|"NOK"|"WARNING" }; display: { "template", "fields" }; configure: { "job_config_id" } or a configuration.',
  },
  ttl_seconds: { type: 'integer', minimum: 1, maximum: MAX_TTL_SECONDS, description: `Seconds until it expires, 1..${MAX_TTL_SECONDS}; default ${DEFAULT_TTL_SECONDS}.` },
} as const;

const commandParams = {
  type: 'object',
  properties: { customer_id: { type: 'string' }, command_id: { type: 'string', description: 'The command id.' } },
  required: ['customer_id', 'command_id'],
} as const;

type GatewayParams = { customer_id: string; gateway_id: string };
type CommandParams = { customer_id: string; command_id: string };

/** The commands to store for these gateways (ids lower-case, as stored) with one input. */
function newCommands(gatewayIds: string[], input: CommandInput, now: number): NewCommand[] {
  const parameters = JSON.stringify(input.parameters ?? {});
  const expires = expiryOf(input, now);
  return gatewayIds.map((id) => ({ id: timeOrderedUuid(now), gateway_id: id.toLowerCase(), device_id: input.device_id ?? null, name: input.name, parameters, expires_at: expires }));
}

/** Stores the commands with their audit entries, or answers 404 naming the gateways that do not exist. */
async function create(ctx: ServerContext, request: FastifyRequest<{ Params: { customer_id: string } }>, commands: NewCommand[], now: number): Promise<CommandRecord[]> {
  // Time-ordered ids, as the commands' own (domain/command-ids.ts): a bulk call's entries append to the audit log's key index.
  const audit = commands.map((c) => ({ ...auditEntry(ctx, request, 'command.created', { type: 'command', id: c.id }, { gateway_id: c.gateway_id, name: c.name }), id: timeOrderedUuid(now) }));
  try {
    return await ctx.store.commands.createAll(request.params.customer_id, commands, now, audit);
  } catch (error) {
    if (!(error instanceof UnknownGateways)) throw error;
    const names = error.gatewayIds.map((id) => `"${id}"`).join(', ');
    throw notFound(`${error.gatewayIds.length === 1 ? 'Gateway' : 'Gateways'} ${names} ${error.gatewayIds.length === 1 ? 'does' : 'do'} not exist: see GET /${request.params.customer_id}/gateways.`);
  }
}

/** Commands to gateways (docs/commands.md): create one or many, list a gateway's, read, cancel. */
export function registerCommandRoutes(app: FastifyInstance, ctx: ServerContext): void {
  registerCommandCreation(app, ctx);
  registerCommandReads(app, ctx);
}

/** Creating commands: for one gateway, or one per gateway of a list. */
function registerCommandCreation(app: FastifyInstance, ctx: ServerContext): void {
  app.post<{ Params: GatewayParams; Body: CommandInput }>('/:customer_id/gateways/:gateway_id/commands', {
    config: PERMISSION,
    schema: {
      operationId: 'createCommand',
      summary: 'Queue a command for a gateway (or one of its scanners)',
      description: 'Stored before the answer: the gateway receives it on its command topic as soon as it is subscribed, on any instance, until expires_at.',
      tags: ['commands'],
      params: gatewayParams,
      body: { type: 'object', properties: inputFields, required: ['name'], additionalProperties: false },
      response: { 201: commandSchema, ...errorResponses },
      refusals: { 404: NO_GATEWAY },
    },
    handler: async (request, reply) => {
      const problem = commandInputProblem(request.body);
      if (problem) throw badRequest(problem);
      const now = ctx.clock();
      const [command] = await create(ctx, request, newCommands([request.params.gateway_id], request.body, now), now);
      return reply.code(201).send(toApiCommand(command!, now));
    },
  });

  app.post<{ Params: { customer_id: string }; Body: CommandInput & { gateway_ids: string[] } }>('/:customer_id/commands', {
    config: PERMISSION,
    schema: {
      operationId: 'createCommands',
      summary: `Queue one command for each of 1..${MAX_BULK_COMMANDS} gateways: all or none`,
      description: 'One command per gateway, with the same name, parameters and lifetime, stored in one transaction; the answer lists them in the order of gateway_ids.',
      tags: ['commands'],
      params: customerParams,
      body: {
        type: 'object',
        properties: {
          gateway_ids: { type: 'array', minItems: 1, maxItems: MAX_BULK_COMMANDS, items: { type: 'string', minLength: 1, maxLength: 64 } },
          ...inputFields,
        },
        required: ['gateway_ids', 'name'],
        additionalProperties: false,
      },
      response: { 201: { type: 'array', items: commandSchema }, ...errorResponses },
      refusals: { 404: 'A gateway of gateway_ids does not exist in the customer.' },
    },
    handler: async (request, reply) => {
      const { gateway_ids, ...input } = request.body;
      const problem = commandInputProblem(input);
      if (problem) throw badRequest(problem);
      const lower = gateway_ids.map((id) => id.toLowerCase());
      const repeated = [...new Set(lower.filter((id, i) => lower.indexOf(id) !== i))];
      if (repeated.length) throw badRequest(`Field "gateway_ids" names ${repeated.map((id) => `"${id}"`).join(', ')} more than once: name each gateway once.`);
      const now = ctx.clock();
      const created = await create(ctx, request, newCommands(lower, input, now), now);
      return reply.code(201).send(created.map((c) => toApiCommand(c, now)));
    },
  });
}

/** Reading and canceling commands: a gateway's list, one command, cancel while queued. */
function registerCommandReads(app: FastifyInstance, ctx: ServerContext): void {
  app.get<{ Params: GatewayParams; Querystring: { next_token?: string; limit: number } }>('/:customer_id/gateways/:gateway_id/commands', {
    config: PERMISSION,
    schema: {
      operationId: 'listGatewayCommands',
      summary: 'Commands of a gateway, newest first, paginated',
      description: 'Up to limit commands per page, each with its status now; links.next continues the list.',
      tags: ['commands'],
      params: gatewayParams,
      querystring: { type: 'object', properties: { next_token: { type: 'string' }, limit: limitParameter } },
      response: { 200: listOf(commandSchema, 'List of commands'), ...errorResponses },
      refusals: { 404: NO_GATEWAY },
    },
    handler: async (request) => {
      const { customer_id, gateway_id } = request.params;
      const gateway = await ctx.store.gateways.byId(customer_id, gateway_id);
      if (!gateway) throw notFound(`Gateway "${gateway_id}" does not exist.`);
      const list = { segment: `gateways/${gateway.id}/commands`, noun: 'command' };
      const { page, next } = await createdIdPage(list, customer_id, request.query, (before, limit) => ctx.store.commands.page(customer_id, gateway.id, before, limit));
      const now = ctx.clock();
      return listBody(page.map((c) => toApiCommand(c, now)), `Commands of gateway ${gateway.name}, newest first`, next);
    },
  });

  app.get<{ Params: CommandParams }>('/:customer_id/commands/:command_id', {
    config: PERMISSION,
    schema: {
      operationId: 'getCommand',
      summary: 'One command, with its status now',
      description: 'A QUEUED or DELIVERED command past expires_at reads as EXPIRED.',
      tags: ['commands'],
      params: commandParams,
      response: { 200: commandSchema, ...errorResponses },
      refusals: { 404: 'No command with this id in the customer.' },
    },
    handler: async (request) => {
      const { customer_id, command_id } = request.params;
      const command = await ctx.store.commands.byId(customer_id, command_id);
      if (!command) throw notFound(`Command "${command_id}" does not exist.`);
      return toApiCommand(command, ctx.clock());
    },
  });

  app.post<{ Params: CommandParams }>('/:customer_id/commands/:command_id/cancel', {
    config: PERMISSION,
    schema: {
      operationId: 'cancelCommand',
      summary: 'Cancel a QUEUED command',
      description: 'QUEUED -> CANCELED: it is not sent from now on. One the gateway already acknowledged, finished or expired cannot be canceled (409).',
      tags: ['commands'],
      params: commandParams,
      response: { 200: commandSchema, ...errorResponses },
      refusals: { 404: 'No command with this id in the customer.', 409: 'The command is no longer QUEUED.' },
    },
    handler: async (request) => {
      const { customer_id, command_id } = request.params;
      const now = ctx.clock();
      const audit = auditEntry(ctx, request, 'command.canceled', { type: 'command', id: command_id.toLowerCase() });
      const outcome = await ctx.store.commands.cancel(customer_id, command_id, now, audit);
      if (outcome === 'missing') throw notFound(`Command "${command_id}" does not exist.`);
      if ('final' in outcome) {
        throw conflict(`Command "${command_id}" is ${statusAt(outcome.final, now)}: only a QUEUED command can be canceled.`);
      }
      return toApiCommand(outcome, now);
    },
  });
}
