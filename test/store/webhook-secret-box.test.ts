// The webhooks' secrets at rest (docs/webhooks.md "Secrets at rest"): a sealed secret is opened
// once, not at every read of its webhook by the deliverer, and a value sealed again (a rotation)
// or sealed for another webhook or under another key opens afresh, or not at all.
import * as crypto from 'node:crypto';
import { beforeEach, expect, it, vi } from 'vitest';
import { WebhookSecretBox } from '../../src/store/shared/sealing.js';
import type { SecretRepository } from '../../src/store/ports/index.js';

const decryptions = vi.hoisted(() => ({ count: 0 }));
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  const createDecipheriv = (...args: Parameters<typeof actual.createDecipheriv>) => (decryptions.count++, actual.createDecipheriv(...args));
  return { ...actual, default: { ...actual, createDecipheriv }, createDecipheriv };
});

const secrets = { getOrCreate: async (_name: string, make: () => string) => make() } as unknown as SecretRepository;

beforeEach(() => {
  decryptions.count = 0;
});

it('opens a sealed secret once, however often its webhook is read', async () => {
  const box = new WebhookSecretBox(secrets);
  const key = await box.ready();
  const sealed = box.seal(key, 'wh-1', 'whsec_first');
  const read = () => box.open(key, 'wh-1', new Uint8Array(sealed));
  expect([read(), read(), read()]).toEqual(['whsec_first', 'whsec_first', 'whsec_first']);
  expect(decryptions.count).toBe(1);
});

it('opens a secret sealed again (a rotation) afresh, and refuses a value of another webhook or key', async () => {
  const box = new WebhookSecretBox(secrets);
  const key = await box.ready();
  expect(box.open(key, 'wh-1', box.seal(key, 'wh-1', 'whsec_first'))).toBe('whsec_first');
  const rotated = box.seal(key, 'wh-1', 'whsec_second');
  expect(box.open(key, 'wh-1', rotated)).toBe('whsec_second');
  expect(decryptions.count).toBe(2);
  expect(() => box.open(key, 'wh-2', rotated)).toThrow('the secret of webhook wh-2 does not open');
  const otherKey = crypto.randomBytes(32);
  expect(() => box.open(otherKey, 'wh-1', rotated)).toThrow('the secret of webhook wh-1 does not open');
  // A value whose ciphertext was changed (same nonce) is not taken for the one opened before.
  const tampered = Buffer.from(rotated);
  tampered[tampered.length - 1] ^= 1;
  expect(() => box.open(key, 'wh-1', tampered)).toThrow('the secret of webhook wh-1 does not open');
});
