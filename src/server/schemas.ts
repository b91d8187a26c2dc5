import type { FastifyInstance } from 'fastify';

/** Registers the shared schemas (`Error#`) that routes refer to. */
export function addSharedSchemas(app: FastifyInstance): void {
  app.addSchema({
    $id: 'Error',
    type: 'object',
    description: 'Every error response: a short fixed title and a sentence that says what to change.',
    properties: { title: { type: 'string' }, details: { type: 'string' } },
    required: ['title', 'details'],
  });
}

/** The error responses every route may give, for the serializer; the OpenAPI document lists each status instead (openapi.ts). */
export const errorResponses = {
  '4xx': { $ref: 'Error#' },
  '5xx': { $ref: 'Error#' },
} as const;

/** `limit` of list calls (docs/http.md "Lists"). */
export const limitParameter = { type: 'integer', minimum: 1, maximum: 500, default: 500 } as const;

/** The list wrapper of every list (docs/http.md "Lists") around the given item schema. */
export function listOf(item: object, description: string) {
  return {
    type: 'object',
    description,
    properties: {
      items: { type: 'array', items: item },
      links: { type: 'object', properties: { next: { type: 'string' } } },
      metadata: {
        type: 'object',
        properties: {
          description: { type: 'string' },
          size: { type: 'integer' },
          filters: {
            type: 'array',
            items: {
              type: 'object',
              properties: { name: { type: 'string' }, value: {} },
              required: ['name', 'value'],
            },
          },
        },
        required: ['description', 'size', 'filters'],
      },
    },
    required: ['items', 'links', 'metadata'],
  } as const;
}

/** The list wrapper value for one page. */
export function listBody<T>(
  items: T[],
  description: string,
  next: string | undefined,
  filters: { name: string; value: unknown }[] = [],
) {
  return {
    items,
    links: next ? { next } : {},
    metadata: { description, size: items.length, filters },
  };
}

export const customerParams = {
  type: 'object',
  properties: { customer_id: { type: 'string', minLength: 1 } },
  required: ['customer_id'],
} as const;
