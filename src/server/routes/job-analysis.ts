import type { FastifyInstance } from 'fastify';
import type { ServerContext } from '../context.js';
import { badRequest, notFound } from '../errors.js';
import { customerParams, errorResponses } from '../schemas.js';
import { NO_JOB_CONFIG } from './job-configs.js';

const jobSchema = {
  type: 'object',
  properties: {
    start_time: { type: 'integer' },
    end_time: { type: 'integer' },
    start_event_id: { type: 'string', description: 'Event that marks the start.' },
    end_event_id: { type: 'string', description: 'Event that marks the end.' },
  },
  required: ['start_time', 'end_time', 'start_event_id', 'end_event_id'],
} as const;

export const jobAnalysisSchema = {
  type: 'object',
  properties: {
    results: {
      type: 'array',
      description: 'One entry per gateway of the job configuration, in its gateway_ids order.',
      items: {
        type: 'object',
        properties: { gateway_id: { type: 'string' }, jobs: { type: 'array', items: jobSchema, description: 'Oldest first.' } },
        required: ['gateway_id', 'jobs'],
      },
    },
  },
  required: ['results'],
} as const;

interface AnalysisBody {
  job_config_id: string;
  start_time: number;
  end_time: number;
}

/** `POST /{customer_id}/job-analysis` (docs/jobs-and-assets.md "Job analysis"): runs in a worker thread, never on the event loop. */
export function registerJobAnalysisRoutes(app: FastifyInstance, ctx: ServerContext): void {
  app.post<{ Params: { customer_id: string }; Body: AnalysisBody }>('/:customer_id/job-analysis', {
    config: { access: { permission: 'jobanalysis.run' } },
    schema: {
      operationId: 'runJobAnalysis',
      summary: 'The jobs of a job configuration between start_time (included) and end_time (excluded)',
      description: 'For each gateway of the job configuration, the jobs its events show between the barcodes; computed in a worker thread.',
      tags: ['job configurations'],
      params: customerParams,
      body: {
        type: 'object',
        properties: {
          job_config_id: { type: 'string', minLength: 1 },
          start_time: { type: 'integer', description: 'Milliseconds since the epoch, included.' },
          end_time: { type: 'integer', description: 'Milliseconds since the epoch, excluded.' },
        },
        required: ['job_config_id', 'start_time', 'end_time'],
        additionalProperties: false,
      },
      response: { 200: jobAnalysisSchema, ...errorResponses },
      refusals: { 404: NO_JOB_CONFIG },
      readOnly: true,
    },
    handler: async (request, reply) => {
      const { job_config_id, start_time, end_time } = request.body;
      if (end_time < start_time) {
        throw badRequest(`Body field "end_time" (${end_time}) is before "start_time" (${start_time}).`);
      }
      const config = await ctx.store.jobConfigs.byId(request.params.customer_id, job_config_id);
      if (!config) throw notFound(`Job configuration "${job_config_id}" does not exist.`);
      // The worker hands back the serialized body (jobAnalysisSchema's shape): sent as it is.
      const body = await ctx.store.jobAnalysis.analyze({
        gatewayIds: config.gateway_ids,
        barcodes: { start_barcode: config.start_barcode, end_barcode: config.end_barcode },
        range: { start_time, end_time },
      });
      return reply.type('application/json; charset=utf-8').send(body);
    },
  });
}
