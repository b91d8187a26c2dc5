import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sameSecret } from '../../auth/secrets.js';
import { isLoopback } from '../../domain/addresses.js';
import { credentialOf } from '../access.js';
import { forbidden, unauthorized, type HttpError } from '../errors.js';
import type { ServiceMetrics } from '../metrics.js';
import { errorResponses } from '../schemas.js';

/** Who asks for /metrics: the Authorization header, the socket's peer, and the client a trusted balancer names (else the peer). */
export interface MetricsCaller {
  authorization: string | undefined;
  peer: string | undefined;
  client: string;
}

/**
 * docs/metrics.md "Who may scrape": with SCANHUB_METRICS_TOKEN set, its Bearer token from anywhere;
 * unset, only this machine. Behind a `--trust-proxy` balancer both the balancer and the client it
 * names must be on loopback, so that a balancer on this machine does not hand /metrics to everyone.
 */
export function metricsRefusal(token: string | undefined, caller: MetricsCaller): HttpError | undefined {
  if (token !== undefined) {
    const credential = credentialOf(caller.authorization);
    if (credential === undefined) return unauthorized('/metrics needs the metrics token: send "Authorization: Bearer <SCANHUB_METRICS_TOKEN>".');
    if (!sameSecret(credential, token)) return unauthorized('The token in the Authorization header is not the metrics token (SCANHUB_METRICS_TOKEN of the server).');
    return undefined;
  }
  if (caller.peer !== undefined && isLoopback(caller.peer) && isLoopback(caller.client)) return undefined;
  return forbidden(
    `/metrics is served only to this machine (loopback) while SCANHUB_METRICS_TOKEN is unset, and this request comes from ${caller.client}: scrape from this machine, or set SCANHUB_METRICS_TOKEN on the server and send it as a Bearer token.`,
  );
}

/** `GET /metrics`: the Prometheus text format, outside the IdToken guard (its own token or loopback). */
export function registerMetricsRoutes(app: FastifyInstance, metrics: ServiceMetrics, token: string | undefined): void {
  app.get('/metrics', {
    schema: {
      operationId: 'getMetrics',
      summary: 'Metrics in the Prometheus text format',
      description:
        'For Prometheus: ingest, MQTT, HTTP, export and database metrics and the process metrics, in the text format. With SCANHUB_METRICS_TOKEN set it needs that token as a Bearer token; unset, it answers clients on the server\'s own machine (loopback) only.',
      tags: ['operations'],
      security: [{ MetricsToken: [] }, {}],
      response: {
        200: {
          description: 'Prometheus text exposition format 0.0.4 (docs/metrics.md lists the metrics).',
          content: { 'text/plain': { schema: { type: 'string' } } },
        },
        ...errorResponses,
      },
      refusals: {
        401: 'SCANHUB_METRICS_TOKEN is set and the Authorization header does not carry it.',
        403: 'SCANHUB_METRICS_TOKEN is unset and the client is not on the server\'s machine (loopback), or a trusted balancer forwarded it for a client that is not.',
      },
    },
    onRequest: async (request: FastifyRequest) => {
      const refusal = metricsRefusal(token, { authorization: request.headers.authorization, peer: request.socket.remoteAddress, client: request.ip });
      if (refusal) throw refusal;
    },
    handler: async (_request, reply) => {
      const { text, contentType } = await metrics.exposition();
      return reply.type(contentType).send(text);
    },
  });
}
