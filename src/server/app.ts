import swagger from '@fastify/swagger';
import Fastify, { type FastifyInstance, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { redactedUrl } from '../domain/log-redaction.js';
import { installAccessGuard } from './access.js';
import type { ServerContext } from './context.js';
import { MAX_PARAM_LENGTH, frameworkError, installConventions } from './conventions.js';
import { clientErrorHandler, nodeServerOptions } from './http-refusals.js';
import { openApiOptions, requireOperationDocs } from './openapi.js';
import type { RateLimits } from '../domain/rate-limits.js';
import { installRateLimits } from './rate-limits.js';
import { registerApiKeyRoutes } from './routes/api-keys.js';
import { registerAssetRoutes } from './routes/assets.js';
import { registerAuditLogRoutes } from './routes/audit-log.js';
import { registerAuthRoutes } from './routes/auth.js';
import { registerCertificateRoutes } from './routes/certificates.js';
import { registerConsoleRoutes } from './routes/console.js';
import { registerCommandRoutes } from './routes/commands.js';
import { registerDeviceRoutes } from './routes/devices.js';
import { registerDownloadRoutes } from './routes/downloads.js';
import { registerEventRoutes } from './routes/events.js';
import { registerEventStreamRoutes } from './routes/event-stream.js';
import { registerExportRoutes } from './routes/exports.js';
import { registerFeatureRoutes } from './routes/features.js';
import { registerGatewayRoutes } from './routes/gateways.js';
import { registerHealthRoutes, type Readiness } from './routes/health.js';
import { registerProvisioningRoutes } from './routes/provisioning.js';
import { registerPackageRoutes } from './routes/provisioning-packages.js';
import { registerRetentionRoutes } from './routes/retention.js';
import { registerJobAnalysisRoutes } from './routes/job-analysis.js';
import { registerJobConfigRoutes } from './routes/job-configs.js';
import { registerMetricsRoutes } from './routes/metrics.js';
import { registerOpenApiRoutes } from './routes/openapi.js';
import { ServiceMetrics, UNMATCHED_ROUTE } from './metrics.js';
import { registerUserPasswordRoutes } from './routes/user-passwords.js';
import { registerUserRoutes } from './routes/users.js';
import { registerWebhookActionRoutes } from './routes/webhook-actions.js';
import { registerWebhookRoutes } from './routes/webhooks.js';
import { registerAlertRoutes } from './routes/alerts.js';
import { addSharedSchemas } from './schemas.js';
import { strictBodyValidators } from './validation.js';
import type { TlsPair } from '../pki/tls-pair.js';

export const BODY_LIMIT = 1024 * 1024;

export interface AppOptions {
  /** pino options, or false for silence (tests). */
  logger?: FastifyServerOptions['logger'];
  /** What `/healthz` reports; all ready when omitted (tests). */
  readiness?: Readiness;
  /**
   * Addresses and CIDR ranges of the balancers whose X-Forwarded-For is believed (`--trust-proxy`):
   * a request from one of them is logged, limited and audited as the client it names. Nobody's by default.
   */
  trustProxy?: string[];
  /** Requests per minute per client address on POST /auth/* and POST /provisioning (default RATE_LIMITS). */
  rateLimits?: RateLimits;
  /** Serve HTTPS with this pair (reloaded with `server.setSecureContext`); plain HTTP without. */
  tls?: TlsPair;
  /** The metrics `GET /metrics` reports and HTTP requests are counted into (a registry of its own when omitted). */
  metrics?: ServiceMetrics;
  /** SCANHUB_METRICS_TOKEN: `GET /metrics` needs it as a Bearer token; unset, it answers loopback clients only. */
  metricsToken?: string;
}

/** Request lines as fastify logs them, with the secrets of their URL replaced (domain/log-redaction.ts). */
function withRedactedUrls(logger: FastifyServerOptions['logger']): FastifyServerOptions['logger'] {
  if (typeof logger !== 'object' || logger === null) return logger;
  const req = (request: FastifyRequest) => ({
    method: request.method,
    url: redactedUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  });
  return { ...logger, serializers: { req, ...logger.serializers } };
}

/** Builds the HTTP API over the context. Never listens: `serve` and tests decide that. */
export async function buildApp(ctx: ServerContext, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: withRedactedUrls(options.logger ?? false),
    bodyLimit: BODY_LIMIT,
    // Report every unknown field instead of silently dropping it; coerce query strings only.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', allErrors: false } },
    // ...and only query strings, path parameters and headers: a JSON body keeps the types it was sent with.
    schemaController: strictBodyValidators(),
    // conventions.ts answers requests that arrive while closing, in the usual error body.
    return503OnClosing: false,
    frameworkErrors: frameworkError,
    // Requests Node's HTTP parser refuses, and 431s, in the usual error body (http-refusals.ts).
    clientErrorHandler,
    ...(options.tls ? { https: { ...nodeServerOptions, cert: options.tls.certPem, key: options.tls.keyPem } } : { http: nodeServerOptions }),
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    forceCloseConnections: 'idle',
    // proxy-addr: X-Forwarded-For is read right to left, up to the first address not trusted.
    ...(options.trustProxy?.length ? { trustProxy: options.trustProxy.join(',') } : {}),
  });

  // Order matters: the OpenAPI collector and the guards must see every route registered after them.
  await app.register(swagger, openApiOptions(ctx));
  addSharedSchemas(app);
  await installConventions(app, { https: options.tls !== undefined });
  installAccessGuard(app, ctx);
  await installRateLimits(app, options.rateLimits);
  requireOperationDocs(app);
  const metrics = options.metrics ?? new ServiceMetrics(ctx.store);
  // Labelled by the route's template, never the raw path (whose ids would make a series per gateway).
  app.addHook('onResponse', async (request, reply) => {
    metrics.observeRequest(request.method, request.routeOptions.url ?? UNMATCHED_ROUTE, reply.statusCode, reply.elapsedTime / 1000);
  });

  registerHealthRoutes(app, ctx, options.readiness ?? { http: true, mqtt: true }, options.metricsToken);
  registerAuthRoutes(app, ctx);
  registerUserRoutes(app, ctx);
  registerUserPasswordRoutes(app, ctx);
  registerApiKeyRoutes(app, ctx);
  registerFeatureRoutes(app, ctx);
  registerDownloadRoutes(app, ctx);
  registerEventRoutes(app, ctx);
  registerEventStreamRoutes(app, ctx);
  registerDeviceRoutes(app, ctx);
  registerExportRoutes(app, ctx);
  registerGatewayRoutes(app, ctx);
  registerCommandRoutes(app, ctx);
  registerProvisioningRoutes(app, ctx);
  registerPackageRoutes(app, ctx);
  registerCertificateRoutes(app, ctx);
  registerJobConfigRoutes(app, ctx);
  registerJobAnalysisRoutes(app, ctx);
  registerAssetRoutes(app, ctx);
  registerAuditLogRoutes(app, ctx);
  registerRetentionRoutes(app, ctx);
  registerWebhookRoutes(app, ctx);
  registerWebhookActionRoutes(app, ctx);
  registerAlertRoutes(app, ctx);
  registerMetricsRoutes(app, metrics, options.metricsToken);
  registerConsoleRoutes(app);
  // Registered last: the document lists the paths in the order the routes were registered.
  registerOpenApiRoutes(app);

  await app.ready();
  return app;
}
