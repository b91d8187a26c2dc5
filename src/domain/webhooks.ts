import { isIP } from 'node:net';
import { addressMatcher } from './addresses.js';

/** The rules of webhooks (docs/webhooks.md): what they subscribe to, where they may point, how deliveries are retried. */

export { WEBHOOK_EVENT_TYPES, isWebhookEventType, type WebhookEventType } from './webhook-event-types.js';

/**
 * The type of a message of stored events: `data` holds up to EVENTS_PER_MESSAGE of them, of the
 * types the webhook takes (`event.scan`, `event.telemetry`), in commit order; each event's `type`
 * says which it is.
 */
export const EVENT_BATCH_TYPE = 'event.batch';

/** The type of the message `POST .../webhooks/{id}/test` sends, whatever the webhook subscribes to. */
export const WEBHOOK_TEST_TYPE = 'webhook.test';

/** Timings and bounds of delivery; ServeOptions may shorten the timings (tests). */
export interface WebhookTimings {
  /** The first retry's ceiling; each later one doubles it (full jitter below it). */
  retryBaseMs: number;
  /** The ceiling of any retry delay. */
  retryMaxMs: number;
  /** Failing this long without a success disables the webhook. */
  giveUpMs: number;
  /** A request that has not answered within this is a failure. */
  timeoutMs: number;
  /** How long the previous secret still signs after a rotation. */
  previousSecretMs: number;
  /** The lease of a webhook (PostgreSQL): renewed every `leaseRenewMs`, taken over once `leaseMs` passed without renewal. */
  leaseRenewMs: number;
  leaseMs: number;
}

export const DEFAULT_WEBHOOK_TIMINGS: WebhookTimings = {
  retryBaseMs: 5_000,
  retryMaxMs: 3_600_000,
  giveUpMs: 3 * 86_400_000,
  timeoutMs: 10_000,
  previousSecretMs: 86_400_000,
  leaseRenewMs: 10_000,
  leaseMs: 30_000,
};

/** Events in one message at most. */
export const EVENTS_PER_MESSAGE = 500;
/** Bytes of a receiver's answer read at most (the rest is dropped with the connection). */
export const RESPONSE_BODY_CAP = 64 * 1024;
/** Deliveries kept per webhook (the newest; pending ones always). */
export const DELIVERIES_KEPT = 500;

/**
 * The delay before retry number `attempt` (1 for the first retry): exponential backoff with full
 * jitter, a random time below min(max, base * 2^(attempt-1)), so that many webhooks failing
 * together do not retry together. `random` is in [0, 1).
 */
export function retryDelay(attempt: number, timings: Pick<WebhookTimings, 'retryBaseMs' | 'retryMaxMs'>, random: number): number {
  const ceiling = Math.min(timings.retryMaxMs, timings.retryBaseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 30));
  return Math.floor(random * ceiling);
}

const LINK_LOCAL = addressMatcher(['169.254.0.0/16', 'fe80::/10']);
const UNSPECIFIED = addressMatcher(['0.0.0.0/8', '::/128']);
const LOOPBACK = addressMatcher(['127.0.0.0/8', '::1/128']);

/** Why a webhook may not connect to this IP address (a sentence part), or undefined when it may. */
export function refusedAddress(address: string, allowLoopback: boolean): string | undefined {
  if (LINK_LOCAL(address)) return `${address} is link-local`;
  if (UNSPECIFIED(address)) return `${address} is unspecified`;
  if (!allowLoopback && LOOPBACK(address)) return `${address} is loopback (allowed only with serve --webhook-allow-loopback)`;
  return undefined;
}

/** A webhook URL checked for its form; `host` without IPv6 brackets. */
export type CheckedUrl = { ok: true; url: URL; host: string } | { ok: false; reason: string };

/**
 * The URL's form: `http:` or `https:`, no credentials, and, where the host is an IP address or
 * `localhost`, an address the rules allow. Names are checked again at each connection.
 */
export function checkWebhookUrl(text: string, allowLoopback: boolean): CheckedUrl {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, reason: `"${text}" is not an absolute URL` };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, reason: `its scheme "${url.protocol.slice(0, -1)}" is neither https nor http` };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'it carries credentials: the signature authenticates the sender' };
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) !== 0) {
    const refused = refusedAddress(host, allowLoopback);
    if (refused) return { ok: false, reason: refused };
  } else if (/^localhost\.?$/i.test(host) || /\.localhost\.?$/i.test(host)) {
    if (!allowLoopback) return { ok: false, reason: `${host} is loopback (allowed only with serve --webhook-allow-loopback)` };
  }
  return { ok: true, url, host };
}
