import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { JobConfig, JobConfigFields, JobConfigRefusal } from '../../store/ports/index.js';
import type { ServerContext } from '../context.js';
import { badRequest, conflict, notFound } from '../errors.js';
import { customerParams, errorResponses, listBody, listOf } from '../schemas.js';

export const jobConfigSchema = {
  type: 'object',
  properties: {
    job_config_id: { type: 'string', format: 'uuid' },
    job_name: { type: 'string' },
    created: { type: 'integer' },
    last_updated: { type: 'integer' },
    start_barcode: { type: 'string', description: 'The string a start barcode begins with.' },
    end_barcode: { type: 'string', description: 'The string an end barcode begins with.' },
    gateway_ids: { type: 'array', items: { type: 'string' } },
    class: { type: 'string', enum: ['jobconfig'] },
    version: { type: 'integer' },
  },
  required: ['job_config_id', 'job_name', 'created', 'last_updated', 'start_barcode', 'end_barcode', 'gateway_ids', 'class', 'version'],
} as const;

const fieldSchemas = {
  job_name: { type: 'string', minLength: 1, maxLength: 200 },
  start_barcode: { type: 'string', minLength: 1, maxLength: 500 },
  end_barcode: { type: 'string', minLength: 1, maxLength: 500 },
  gateway_ids: { type: 'array', minItems: 1, maxItems: 1000, items: { type: 'string', minLength: 1, maxLength: 200 } },
} as const;

const jobConfigParams = {
  type: 'object',
  properties: { customer_id: { type: 'string' }, job_config_id: { type: 'string' } },
  required: ['customer_id', 'job_config_id'],
} as const;

type Params = { customer_id: string; job_config_id: string };

const tags = ['job configurations'];

/** The 404 of a job configuration id that names none, in the OpenAPI document. */
export const NO_JOB_CONFIG = 'No job configuration with this id in the customer.';

/** Refuses a gateway listed twice; the store checks that each one exists. */
function checkGatewayIds(gatewayIds: string[] | undefined): void {
  const seen = new Set<string>();
  for (const id of gatewayIds ?? []) {
    if (seen.has(id)) throw badRequest(`Body field "gateway_ids" lists gateway "${id}" more than once.`);
    seen.add(id);
  }
}

/** The configuration, or throws the HTTP error its refusal stands for. */
function accepted(outcome: JobConfig | JobConfigRefusal, id: string, name: string | undefined): JobConfig {
  if (!('refused' in outcome)) return outcome;
  switch (outcome.refused) {
    case 'name-taken':
      throw conflict(`A job configuration named "${name}" already exists: choose another job_name.`);
    case 'unknown-gateway':
      throw badRequest(`Body field "gateway_ids" names gateway "${outcome.gateway_id}", which is not a gateway of this customer.`);
    case 'missing':
      throw notFound(`Job configuration "${id}" does not exist.`);
    case 'stale':
      throw conflict(`Job configuration "${id}" has changed (it is at version ${outcome.version}): read it again and retry.`);
  }
}

/** `If-Match: 3` or `If-Match: "3"`: the version the caller last read (`*`: any). */
function expectedVersion(header: string | undefined): number | undefined {
  if (header === undefined || header.trim() === '*') return undefined;
  const match = /^\s*(?:W\/)?"?(\d{1,15})"?\s*$/.exec(header);
  if (!match) throw badRequest(`Header "If-Match" must carry the version of the job configuration, e.g. "3"; got ${JSON.stringify(header)}.`);
  return Number(match[1]);
}

function sendConfig(reply: FastifyReply, config: JobConfig, status = 200) {
  return reply.code(status).header('etag', String(config.version)).send(config);
}

/** Job configurations (docs/jobs-and-assets.md "Job configurations") with PATCH as an extension. */
export function registerJobConfigRoutes(app: FastifyInstance, ctx: ServerContext): void {
  listJobConfigs(app, ctx);
  createJobConfig(app, ctx);
  getJobConfig(app, ctx);
  updateJobConfig(app, ctx);
  deleteJobConfig(app, ctx);
}

function listJobConfigs(app: FastifyInstance, ctx: ServerContext): void {
  app.get<{ Params: { customer_id: string }; Headers: { 'if-none-match'?: string } }>('/:customer_id/job-configs', {
    config: { access: { permission: 'jobconfig.read' } },
    schema: {
      operationId: 'listJobConfigs',
      summary: 'Job configurations of the customer, oldest first; ETag is a revision raised by every change',
      description: 'All of them in one list. Send the ETag in If-None-Match for a 304 while nothing changed.',
      tags,
      params: customerParams,
      response: {
        200: listOf(jobConfigSchema, 'List of job configurations'),
        304: { type: 'null', description: 'Not modified since the ETag in If-None-Match' },
        ...errorResponses,
      },
    },
    handler: async (request, reply) => {
      const customerId = request.params.customer_id;
      // Revision and list come from one snapshot: a change in between would pair a stale ETag with new items.
      const { revision, items } = await ctx.store.jobConfigs.list(customerId);
      reply.header('etag', String(revision));
      const known = request.headers['if-none-match']?.split(',').map((tag) => tag.trim().replace(/^(W\/)?"?|"$/g, ''));
      if (known?.includes(String(revision))) return reply.code(304).send();
      return listBody(items, 'Job configurations of the customer', undefined);
    },
  });
}

function createJobConfig(app: FastifyInstance, ctx: ServerContext): void {
  app.post<{ Params: { customer_id: string }; Body: JobConfigFields }>('/:customer_id/job-configs', {
    config: { access: { permission: 'jobconfig.write' } },
    schema: {
      operationId: 'createJobConfig',
      summary: 'Create a job configuration',
      description: 'A job on one of gateway_ids begins with a scan starting with start_barcode and ends with one starting with end_barcode. The ETag is its version.',
      tags,
      params: customerParams,
      body: { type: 'object', properties: fieldSchemas, required: Object.keys(fieldSchemas), additionalProperties: false },
      response: { 201: jobConfigSchema, ...errorResponses },
      refusals: { 409: 'A job configuration of this name already exists.' },
    },
    handler: async (request, reply) => {
      checkGatewayIds(request.body.gateway_ids);
      const id = randomUUID();
      const outcome = await ctx.store.jobConfigs.create(request.params.customer_id, id, request.body, ctx.clock());
      return sendConfig(reply, accepted(outcome, id, request.body.job_name), 201);
    },
  });
}

function getJobConfig(app: FastifyInstance, ctx: ServerContext): void {
  app.get<{ Params: Params }>('/:customer_id/job-configs/:job_config_id', {
    config: { access: { permission: 'jobconfig.read' } },
    schema: {
      operationId: 'getJobConfig',
      summary: 'One job configuration; ETag is its version',
      description: 'Send the ETag in If-Match on a later change.',
      tags,
      params: jobConfigParams,
      response: { 200: jobConfigSchema, ...errorResponses },
      refusals: { 404: NO_JOB_CONFIG },
    },
    handler: async (request, reply) => {
      const { customer_id, job_config_id } = request.params;
      const config = await ctx.store.jobConfigs.byId(customer_id, job_config_id);
      if (!config) throw notFound(`Job configuration "${job_config_id}" does not exist.`);
      return sendConfig(reply, config);
    },
  });
}

function updateJobConfig(app: FastifyInstance, ctx: ServerContext): void {
  app.patch<{ Params: Params; Body: Partial<JobConfigFields>; Headers: { 'if-match'?: string } }>('/:customer_id/job-configs/:job_config_id', {
    config: { access: { permission: 'jobconfig.write' } },
    schema: {
      operationId: 'updateJobConfig',
      summary: 'Change name, barcodes or gateways of a job configuration (extension); raises its version by one',
      description: 'Send If-Match with the version last read to refuse (409) a concurrent change.',
      tags,
      params: jobConfigParams,
      body: { type: 'object', properties: fieldSchemas, minProperties: 1, additionalProperties: false },
      response: { 200: jobConfigSchema, ...errorResponses },
      refusals: { 404: NO_JOB_CONFIG, 409: 'The job configuration changed since the If-Match version, or the new name is taken.' },
    },
    handler: async (request, reply) => {
      const { customer_id, job_config_id } = request.params;
      checkGatewayIds(request.body.gateway_ids);
      const version = expectedVersion(request.headers['if-match']);
      const outcome = await ctx.store.jobConfigs.update(customer_id, job_config_id, request.body, ctx.clock(), version);
      return sendConfig(reply, accepted(outcome, job_config_id, request.body.job_name));
    },
  });
}

function deleteJobConfig(app: FastifyInstance, ctx: ServerContext): void {
  app.delete<{ Params: Params }>('/:customer_id/job-configs/:job_config_id', {
    config: { access: { permission: 'jobconfig.write' } },
    schema: {
      operationId: 'deleteJobConfig',
      summary: 'Delete a job configuration',
      description: 'Job analyses can no longer name it; the events stay.',
      tags,
      params: jobConfigParams,
      response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses },
      refusals: { 404: NO_JOB_CONFIG },
    },
    handler: async (request, reply) => {
      const { customer_id, job_config_id } = request.params;
      if (!await ctx.store.jobConfigs.delete(customer_id, job_config_id)) throw notFound(`Job configuration "${job_config_id}" does not exist.`);
      return reply.code(204).send();
    },
  });
}
