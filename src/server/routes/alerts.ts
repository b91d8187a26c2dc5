import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { ALERT_KINDS, ALERT_PARAMETERS, alertView, type AlertKind } from '../../domain/alerts.js';
import type { AlertRule } from '../../store/ports/index.js';
import { auditEntry } from '../audit.js';
import type { ServerContext } from '../context.js';
import { badRequest, notFound } from '../errors.js';
import { customerParams, errorResponses, listBody, listOf } from '../schemas.js';

/** Alert rules and alerts (docs/alerts.md). */

const ruleProperties = {
  kind: { type: 'string', enum: [...ALERT_KINDS] },
  gateway_ids: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 1000, uniqueItems: true },
  after_seconds: { type: 'integer', minimum: 10, maximum: 604_800 },
  below_percent: { type: 'integer', minimum: 1, maximum: 99 },
  job_config_id: { type: 'string' },
} as const;

const ruleSchema = {
  type: 'object',
  properties: { rule_id: { type: 'string' }, ...ruleProperties, created: { type: 'integer' } },
  required: ['rule_id', 'kind', 'created'],
} as const;

const alertSchema = {
  type: 'object',
  properties: {
    alert_id: { type: 'string' },
    rule_id: { type: 'string' },
    kind: { type: 'string' },
    subject: { type: 'object', properties: { type: { type: 'string' }, id: { type: 'string' } }, required: ['type', 'id'] },
    state: { type: 'string', enum: ['OPEN', 'RESOLVED'] },
    opened: { type: 'integer' },
    resolved: { type: 'integer' },
    details: { type: 'object', additionalProperties: true },
  },
  required: ['alert_id', 'rule_id', 'kind', 'subject', 'state', 'opened', 'details'],
} as const;

type RuleBody = { kind: AlertKind; gateway_ids?: string[]; after_seconds?: number; below_percent?: number; job_config_id?: string };

/** Refuses a rule naming a job configuration or (station_silent) a gateway the customer does not have. */
async function checkNamed(ctx: ServerContext, customerId: string, kind: AlertKind, parameters: Omit<RuleBody, 'kind'>): Promise<void> {
  const configId = parameters.job_config_id;
  if (configId !== undefined && !(await ctx.store.jobConfigs.byId(customerId, configId))) {
    throw badRequest(`Body field "job_config_id" is "${configId}", which is no job configuration of the customer: GET /${customerId}/job-configs lists them.`);
  }
  if (kind !== 'station_silent') return;
  for (const gatewayId of parameters.gateway_ids ?? []) {
    if (!(await ctx.store.gateways.byId(customerId, gatewayId))) throw badRequest(`Body field "gateway_ids" names "${gatewayId}", which is no gateway of the customer.`);
  }
}

const toRule = (rule: AlertRule) => ({ rule_id: rule.id, kind: rule.kind, ...rule.parameters, created: rule.created });

export function registerAlertRoutes(app: FastifyInstance, ctx: ServerContext): void {
  app.post<{ Params: { customer_id: string }; Body: RuleBody }>('/:customer_id/alert-rules', {
    config: { access: { permission: 'webhook.write' } },
    schema: {
      operationId: 'createAlertRule',
      summary: 'Create an alert rule',
      description:
        'gateway_offline (after_seconds, gateway_ids?): an alert opens when a gateway has sent nothing for after_seconds, and resolves at its next message. device_low_battery (below_percent): when a scanner reports a battery below it, resolved at 5 points above. job_open_too_long (job_config_id, after_seconds): when a job of the configuration is open on a gateway for after_seconds, resolved when it ends or a new start replaces it. station_silent (gateway_ids, after_seconds): when a gateway sends messages but no scan for after_seconds, resolved at its next scan or once it sends nothing. Each opening and resolution is sent to the webhooks that take alert.opened / alert.resolved.',
      tags: ['webhooks'],
      params: customerParams,
      body: { type: 'object', properties: ruleProperties, required: ['kind'], additionalProperties: false },
      response: { 201: ruleSchema, ...errorResponses },
      refusals: { 400: 'A parameter the kind needs missing or one it does not take, or a job configuration or gateway the customer does not have.' },
    },
    handler: async (request, reply) => {
      const { kind, ...parameters } = request.body;
      const { required, optional } = ALERT_PARAMETERS[kind];
      const missing = required.find((name) => !(name in parameters));
      if (missing) throw badRequest(`Body field "${missing}" is required for a ${kind} rule (it takes ${[...required, ...optional].join(', ')}).`);
      const extra = Object.keys(parameters).find((name) => !required.includes(name) && !optional.includes(name));
      if (extra) throw badRequest(`Body field "${extra}" does not belong to a ${kind} rule: it takes ${[...required, ...optional].join(', ')}.`);
      await checkNamed(ctx, request.params.customer_id, kind, parameters);
      const rule: AlertRule = { id: randomUUID(), customer_id: request.params.customer_id, kind, parameters, created: ctx.clock() };
      await ctx.store.alerts.createRule(rule, auditEntry(ctx, request, 'alert_rule.created', { type: 'alert_rule', id: rule.id }, { kind, ...parameters }));
      return reply.code(201).send(toRule(rule));
    },
  });

  app.get<{ Params: { customer_id: string } }>('/:customer_id/alert-rules', {
    config: { access: { permission: 'webhook.write' } },
    schema: {
      operationId: 'listAlertRules',
      summary: 'Alert rules of the customer, oldest first',
      description: 'Every rule of the customer, in one page.',
      tags: ['webhooks'],
      params: customerParams,
      response: { 200: listOf(ruleSchema, 'List of alert rules'), ...errorResponses },
    },
    handler: async (request) => listBody((await ctx.store.alerts.rules(request.params.customer_id)).map(toRule), 'Alert rules of the customer', undefined),
  });

  app.delete<{ Params: { customer_id: string; rule_id: string } }>('/:customer_id/alert-rules/:rule_id', {
    config: { access: { permission: 'webhook.write' } },
    schema: {
      operationId: 'deleteAlertRule',
      summary: 'Delete an alert rule',
      description: 'No alert opens or resolves by it from now on; its alerts stay listed.',
      tags: ['webhooks'],
      params: { type: 'object', properties: { customer_id: { type: 'string' }, rule_id: { type: 'string' } }, required: ['customer_id', 'rule_id'] },
      response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses },
      refusals: { 404: 'No alert rule with this id in the customer.' },
    },
    handler: async (request, reply) => {
      const audit = (rule: AlertRule) => auditEntry(ctx, request, 'alert_rule.deleted', { type: 'alert_rule', id: rule.id }, { kind: rule.kind });
      if (!(await ctx.store.alerts.deleteRule(request.params.customer_id, request.params.rule_id, audit))) throw notFound(`Alert rule "${request.params.rule_id}" does not exist.`);
      return reply.code(204).send();
    },
  });

  app.get<{ Params: { customer_id: string }; Querystring: { state?: 'OPEN' | 'RESOLVED'; limit: number } }>('/:customer_id/alerts', {
    config: { access: { permission: 'gateway.read' } },
    schema: {
      operationId: 'listAlerts',
      summary: 'Alerts of the customer, newest first',
      description: 'Open and resolved alerts (or those of one state), the newest opened first, up to limit.',
      tags: ['webhooks'],
      params: customerParams,
      querystring: { type: 'object', properties: { state: { type: 'string', enum: ['OPEN', 'RESOLVED'] }, limit: { type: 'integer', minimum: 1, maximum: 500, default: 500 } } },
      response: { 200: listOf(alertSchema, 'List of alerts'), ...errorResponses },
    },
    handler: async (request) => {
      const { state, limit } = request.query;
      const alerts = await ctx.store.alerts.list(request.params.customer_id, state, limit);
      return listBody(alerts.map(alertView), 'Alerts of the customer', undefined, state ? [{ name: 'state', value: state }] : []);
    },
  });
}
