// The rules of webhooks (src/domain/webhooks.ts, webhook-signature.ts): backoff with full jitter,
// the address classes refused, and signatures that the Standard Webhooks reference library accepts.
import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { newWebhookSecret, signWebhookMessage, webhookSignatureHeader } from '../../src/domain/webhook-signature.js';
import { DEFAULT_WEBHOOK_TIMINGS, checkWebhookUrl, refusedAddress, retryDelay } from '../../src/domain/webhooks.js';

describe('retryDelay', () => {
  const timings = DEFAULT_WEBHOOK_TIMINGS;
  it('is a random time below 5 s x 2^(attempt-1), capped at 1 h (full jitter)', () => {
    expect(retryDelay(1, timings, 0)).toBe(0);
    expect(retryDelay(1, timings, 0.999_999)).toBe(4_999);
    expect(retryDelay(2, timings, 0.5)).toBe(5_000);
    expect(retryDelay(4, timings, 0.5)).toBe(20_000);
    expect(retryDelay(11, timings, 0.999_999)).toBe(3_599_996);
    expect(retryDelay(500, timings, 0.5)).toBe(1_800_000);
  });
});

describe('refusedAddress and checkWebhookUrl', () => {
  it('refuses link-local and unspecified always, loopback unless allowed, and lets public addresses through', () => {
    expect(['169.254.0.1', 'fe80::1', '0.0.0.0', '::', '127.0.0.1', '::1', '::ffff:127.0.0.1'].map((a) => refusedAddress(a, false))).toEqual([
      '169.254.0.1 is link-local',
      'fe80::1 is link-local',
      '0.0.0.0 is unspecified',
      ':: is unspecified',
      '127.0.0.1 is loopback (allowed only with serve --webhook-allow-loopback)',
      '::1 is loopback (allowed only with serve --webhook-allow-loopback)',
      '::ffff:127.0.0.1 is loopback (allowed only with serve --webhook-allow-loopback)',
    ]);
    expect(['127.0.0.1', '::1', '203.0.113.7', '2001:db8::1'].map((a) => refusedAddress(a, true))).toEqual([undefined, undefined, undefined, undefined]);
    expect(checkWebhookUrl('https://hooks.example.com/a?b=c', false)).toMatchObject({ ok: true, host: 'hooks.example.com' });
  });
});

describe('webhook signatures', () => {
  it('are accepted by the Standard Webhooks reference library, one per secret in the header', () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()];
    const body = '{"type":"webhook.test","timestamp":"2026-01-01T00:00:00.000Z","data":null}';
    const timestamp = Math.floor(Date.now() / 1000);
    const header = webhookSignatureHeader([current, previous], 'msg_1', timestamp, body);
    expect(header.split(' ')).toEqual([signWebhookMessage(current, 'msg_1', timestamp, body), signWebhookMessage(previous, 'msg_1', timestamp, body)]);
    for (const secret of [current, previous]) {
      expect(new Webhook(secret).verify(body, { 'webhook-id': 'msg_1', 'webhook-timestamp': String(timestamp), 'webhook-signature': header })).toEqual(JSON.parse(body));
    }
    expect(() => new Webhook(newWebhookSecret()).verify(body, { 'webhook-id': 'msg_1', 'webhook-timestamp': String(timestamp), 'webhook-signature': header })).toThrow();
  });
});
