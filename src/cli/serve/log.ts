import type { FastifyReply } from 'fastify';
import { pino } from 'pino';
import { redactedUrl } from '../../domain/log-redaction.js';
import type { ServeOptions } from '../../serve/options.js';

/** `serve --log-format`: short lines for a person, or pino's JSON lines for a machine. */
export const LOG_FORMATS = ['pretty', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** pino's levels; SCANHUB_LOG_LEVEL names one. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Fields every line has, or that the line's own words already say. */
const NOT_SHOWN = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'component', 'err', 'res', 'responseTime', 'reqId']);

/** pino's number of the error level: from it on, an error's stack is shown under the line. */
const ERROR_LEVEL = 50;

/** Counters (an object of numbers, like the broker's at shutdown) without their zeros. */
function withoutZeros(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const entries = Object.entries(value);
  return entries.every(([, v]) => typeof v === 'number') ? Object.fromEntries(entries.filter(([, v]) => v !== 0)) : value;
}

/** `key=value`, quoted when the value has spaces or quotes; objects as compact JSON. */
function field(key: string, value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(withoutZeros(value));
  return `${key}=${typeof value === 'string' && /[\s"=]/.test(text) ? JSON.stringify(text) : text}`;
}

/**
 * One log record as a person reads it after the level and time: the message (for a request,
 * `GET /acme/events 200 3.1ms`), then its fields as key=value (reqId and route for requests), and
 * under an error line its stack.
 */
export function humanMessage(log: Record<string, unknown>): string {
  const res = log.res as { statusCode?: number; method?: string; url?: string; route?: string } | undefined;
  const parts: string[] = [];
  if (res && typeof log.responseTime === 'number') {
    parts.push(`${res.method ?? ''} ${res.url ?? ''} ${res.statusCode ?? ''} ${log.responseTime.toFixed(1)}ms`.trim());
    if (log.msg !== 'request completed') parts.push(String(log.msg));
  } else parts.push(String(log.msg ?? ''));
  for (const [key, value] of Object.entries(log)) {
    if (!NOT_SHOWN.has(key) && value !== undefined && value !== null) parts.push(field(key, value));
  }
  if (log.reqId !== undefined) parts.push(field('reqId', log.reqId));
  if (res?.route) parts.push(field('route', res.route));
  const err = log.err as { message?: string; stack?: string } | undefined;
  if (err?.message) parts.push(field('err', err.message));
  const stack = typeof log.level === 'number' && log.level >= ERROR_LEVEL && err?.stack ? `\n    ${err.stack.split('\n').join('\n    ')}` : '';
  return parts.join(' ') + stack;
}

/** How long `serve` waits at exit for its log lines to be written before it gives them up. */
export const LOG_CLOSE_TIMEOUT_MS = 2_000;

/** The logger of `serve` and the way to let go of its stdout before the process exits. */
export interface ServeLog {
  options: ServeOptions['logger'];
  /**
   * Writes what is buffered, within `timeoutMs`, then makes pino's exit-time flush a no-op. That
   * flush (sonic-boom's flushSync) retries a broken pipe forever, so without this a `serve` whose
   * log reader died at shutdown never exits.
   */
  close(timeoutMs?: number): Promise<void>;
  /** For an exit that cannot wait: buffered lines are given up. */
  abandon(): void;
}

/**
 * The logger option of `serve`. JSON is pino's own output. Pretty is pino-pretty run in this
 * thread on each line: one line per request (when it completes, with method, path, status and
 * duration), not fastify's two. Both go through one asynchronous stdout destination.
 */
export async function serveLogger(format: LogFormat, level: string, colour: boolean, to: { fd: number; sync: boolean } = { fd: 1, sync: false }): Promise<ServeLog> {
  const destination = pino.destination({ dest: to.fd, sync: to.sync });
  const abandon = () => {
    destination.flushSync = () => {};
  };
  const close = (timeoutMs = LOG_CLOSE_TIMEOUT_MS) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        abandon();
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      destination.once('close', done);
      destination.once('error', done);
      destination.end();
    });
  if (format === 'json') return { options: { level, stream: destination }, close, abandon };
  const { prettyFactory } = await import('pino-pretty');
  const pretty = prettyFactory({
    colorize: colour,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
    // The fields are in the message (humanMessage); pino-pretty's singleLine would drop the line end here.
    hideObject: true,
    messageFormat: (log) => humanMessage(log),
  });
  const options: ServeOptions['logger'] = {
    level,
    stream: { write: (line: string) => void destination.write(pretty(line)) },
    serializers: {
      // fastify sometimes hands over only { statusCode } (its types say so).
      res: (reply: Partial<FastifyReply> & Pick<FastifyReply, 'statusCode'>) => {
        const { request } = reply;
        return { statusCode: reply.statusCode, method: request?.method, url: request ? redactedUrl(request.url) : undefined, route: request?.routeOptions?.url };
      },
    },
    hooks: {
      logMethod(args, method) {
        if (args[1] === 'incoming request') return;
        method.apply(this, args);
      },
    },
  };
  return { options, close, abandon };
}
