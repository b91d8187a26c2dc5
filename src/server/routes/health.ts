import type { FastifyInstance } from 'fastify';
import type { ServerContext } from '../context.js';
import { errorResponses } from '../schemas.js';

/** Readiness of the parts `/healthz` reports on; `serve` flips them as they come up. */
export interface Readiness {
  http: boolean;
  mqtt: boolean;
  /** Once MQTT is up: what keeps it from storing messages now (its writer thread restarting), if anything. */
  mqttFault?: () => { state: string; reason: string } | undefined;
}

/** `GET /healthz`: 200 once HTTP, MQTT and the database are ready, else 503 naming what is not. */
export function registerHealthRoutes(app: FastifyInstance, ctx: ServerContext, readiness: Readiness): void {
  app.get('/healthz', {
    schema: {
      summary: 'Readiness of HTTP, MQTT and the database',
      tags: ['operations'],
      response: {
        200: {
          type: 'object',
          properties: { status: { type: 'string' }, http: { type: 'string' }, mqtt: { type: 'string' }, database: { type: 'string' } },
        },
        ...errorResponses,
      },
    },
    handler: async (_request, reply) => {
      let database = 'ok';
      try {
        ctx.db.prepare('SELECT 1').get();
      } catch {
        database = 'unavailable';
      }
      const fault = readiness.mqtt ? readiness.mqttFault?.() : undefined;
      const parts = { http: readiness.http ? 'ok' : 'starting', mqtt: readiness.mqtt ? (fault?.state ?? 'ok') : 'starting', database };
      const notReady = Object.entries(parts)
        .filter(([, state]) => state !== 'ok')
        .map(([name]) => (name === 'mqtt' && fault ? `mqtt (${fault.reason})` : name));
      if (notReady.length > 0) {
        return reply.code(503).send({ title: 'Service Unavailable', details: `Not ready yet: ${notReady.join(', ')}.` });
      }
      return { status: 'ok', ...parts };
    },
  });
}
