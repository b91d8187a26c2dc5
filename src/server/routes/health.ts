import type { FastifyInstance } from 'fastify';
import type { ServerContext } from '../context.js';
import { httpError } from '../errors.js';
import { errorResponses } from '../schemas.js';
import { metricsRefusal } from './metrics.js';

/** What /healthz shows of a supervised thread (src/threads/supervised-thread.ts ThreadStatus). */
export interface ThreadHealth {
  readonly name: string;
  readonly state: string;
  readonly starts: number;
  readonly lastCause: Error | undefined;
}

/** Readiness of the parts `/healthz` reports on; `serve` flips them as they come up. */
export interface Readiness {
  http: boolean;
  mqtt: boolean;
  /** Once MQTT is up: what keeps it from storing messages now (its writer thread restarting), if anything. */
  mqttFault?: () => { state: string; reason: string } | undefined;
  /** Once MQTT is up: the supervised threads (ingest writer, checkpointer). */
  threads?: () => ThreadHealth[];
}

const threadSchema = {
  type: 'object',
  properties: {
    state: { type: 'string', enum: ['starting', 'running', 'restarting', 'closed'] },
    starts: { type: 'integer', description: 'Threads started so far: 1 + restarts.' },
    last_cause: { type: ['string', 'null'], description: 'Why the last thread died; null while none has. Shown only to callers that may read /metrics.' },
  },
} as const;

/** `{ "ingest writer": { state, starts, last_cause }, ... }`; without the causes for a caller who may not read them. */
function threadsOf(readiness: Readiness, withReasons: boolean) {
  const threads: Record<string, { state: string; starts: number; last_cause?: string | null }> = {};
  for (const thread of readiness.threads?.() ?? []) {
    threads[thread.name] = { state: thread.state, starts: thread.starts, ...(withReasons ? { last_cause: thread.lastCause?.message ?? null } : {}) };
  }
  return threads;
}

/** The threads in a sentence, for the 503 details: "ingest writer restarting (2 starts, last cause: x)". */
function describeThreads(threads: ReturnType<typeof threadsOf>): string {
  return Object.entries(threads)
    .map(([name, { state, starts, last_cause }]) => `${name} ${state} (${starts} start${starts === 1 ? '' : 's'}${last_cause ? `, last cause: ${last_cause}` : ''})`)
    .join(', ');
}

/**
 * `GET /healthz` (docs/gateways-mqtt.md "`/healthz`"): 200 once HTTP, MQTT and the database are
 * ready (and it has room to write) and the instance hears the others' signals, else 503 naming
 * what is not; both show every supervised thread. Why a part is not ready (a database's error
 * text, a thread's last cause) is told only to those who may read /metrics (docs/security.md).
 */
export function registerHealthRoutes(app: FastifyInstance, ctx: ServerContext, readiness: Readiness, metricsToken: string | undefined): void {
  app.get('/healthz', {
    schema: {
      operationId: 'getHealth',
      summary: 'Readiness of HTTP, MQTT and the database',
      description:
        'For load balancers and monitoring: 200 when HTTP, MQTT and the database are all ready, else 503 naming the parts that are not. Why a part is not ready (its error text, a thread\'s last cause) is told only to callers that may read /metrics (its token, or loopback without one).',
      tags: ['operations'],
      response: {
        200: {
          type: 'object',
          properties: {
            status: { type: 'string' },
            http: { type: 'string' },
            mqtt: { type: 'string' },
            database: { type: 'string', description: 'ok, else unavailable (it does not answer) or storage full (writes are refused for lack of disk space).' },
            signals: { type: 'string', description: 'ok while this instance hears the others (LISTEN scanhub on PostgreSQL; always ok on SQLite), else reconnecting.' },
            threads: { type: 'object', additionalProperties: threadSchema },
          },
        },
        ...errorResponses,
      },
      refusals: { 503: 'Not ready: details names the parts that are not (starting, or the MQTT writer restarting), or the server is shutting down.' },
    },
    handler: async (request, reply) => {
      const withReasons = metricsRefusal(metricsToken, { authorization: request.headers.authorization, peer: request.socket.remoteAddress, client: request.ip }) === undefined;
      let database = 'ok';
      let databaseReason: string | undefined;
      try {
        await ctx.store.ping();
      } catch (error) {
        database = 'unavailable';
        databaseReason = (error as Error).message;
      }
      // Reads work on a full disk, so the ping answers; the writes that were refused say so.
      const full = database === 'ok' ? ctx.store.storage.full() : undefined;
      if (full) {
        database = 'storage full';
        databaseReason = `storage full: ${full}; writes are refused until space is freed`;
      }
      const fault = readiness.mqtt ? readiness.mqttFault?.() : undefined;
      const signalsFault = ctx.store.signals.fault();
      const parts = {
        http: readiness.http ? 'ok' : 'starting',
        mqtt: readiness.mqtt ? (fault?.state ?? 'ok') : 'starting',
        database,
        signals: signalsFault ? 'reconnecting' : 'ok',
      };
      const threads = threadsOf(readiness, withReasons);
      const notReady = Object.entries(parts)
        .filter(([, state]) => state !== 'ok')
        .map(([name]) => {
          if (!withReasons) return name;
          if (name === 'mqtt' && fault) return `mqtt (${fault.reason})`;
          if (name === 'database' && databaseReason) return `database (${databaseReason})`;
          if (name === 'signals' && signalsFault) return `signals (${signalsFault})`;
          return name;
        });
      if (notReady.length > 0) {
        const shown = Object.keys(threads).length > 0 ? ` Threads: ${describeThreads(threads)}.` : '';
        return reply.code(503).send(httpError(503, `Not ready yet: ${notReady.join(', ')}.${shown}`).body());
      }
      return { status: 'ok', ...parts, threads };
    },
  });
}
