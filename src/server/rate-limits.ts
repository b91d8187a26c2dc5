import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { RATE_LIMITS, type RateLimits } from '../domain/rate-limits.js';
import { tooManyRequests } from './errors.js';

const WINDOW_MS = 60_000;

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The per-address limit a route that takes secrets from anyone falls under (its POST): the
     * routes of one group share their counter.
     */
    rateLimitGroup?: keyof RateLimits;
  }
}

/** Which limit a route falls under, if any. */
function groupOf(route: RouteOptions): keyof RateLimits | undefined {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  if (!methods.includes('POST')) return undefined;
  return (route.config as { rateLimitGroup?: keyof RateLimits } | undefined)?.rateLimitGroup;
}

/**
 * Per-address limits on the routes that take secrets from anyone (@fastify/rate-limit, keyed by
 * request.ip, which honours --trust-proxy): one counter per group, so the /auth/* routes share
 * theirs. Install before the routes are registered.
 */
export async function installRateLimits(app: FastifyInstance, limits: RateLimits = RATE_LIMITS): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    keyGenerator: (request) => request.ip,
    errorResponseBuilder: (request, context) => {
      const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
      return tooManyRequests(
        `More than ${context.max} requests a minute from ${request.ip} to ${request.method} ${request.url.split('?')[0]}: retry in ${seconds} seconds.`,
        seconds,
      );
    },
  });
  const limiters = {
    auth: app.rateLimit({ max: limits.auth, timeWindow: WINDOW_MS }),
    provisioning: app.rateLimit({ max: limits.provisioning, timeWindow: WINDOW_MS }),
  };
  app.addHook('onRoute', (route) => {
    const group = groupOf(route);
    if (!group) return;
    const hooks = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [...hooks, limiters[group]];
  });
}
