import type { FastifyInstance } from 'fastify';
import type { ServerContext } from '../context.js';
import { customerParams, errorResponses } from '../schemas.js';

export const featureSchema = {
  type: 'object',
  properties: {
    feature: { type: 'string' },
    enabled: { type: 'boolean' },
    additional_properties: { type: 'object', additionalProperties: true },
  },
  required: ['feature', 'enabled'],
} as const;

/** `GET /{customer_id}/features`: the flags the operator set for the customer. */
export function registerFeatureRoutes(app: FastifyInstance, ctx: ServerContext): void {
  app.get<{ Params: { customer_id: string } }>('/:customer_id/features', {
    config: { access: { permission: 'feature.read' } },
    schema: {
      operationId: 'listFeatures',
      summary: 'Feature flags of the customer',
      description: 'Non-standard or pre-release features available to the customer, each enabled or not, with its additional properties.',
      tags: ['features'],
      params: customerParams,
      response: {
        200: { type: 'object', properties: { features: { type: 'array', items: featureSchema } }, required: ['features'] },
        ...errorResponses,
      },
    },
    handler: async (request) => ({ features: await ctx.store.features.list(request.params.customer_id) }),
  });
}
