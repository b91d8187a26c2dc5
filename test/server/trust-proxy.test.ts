import { InvalidArgumentError } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { trustedProxies } from '../../src/cli/serve/flags.js';
import { collectedLogs, startTestServer, type TestServer } from '../helpers/server.js';

describe('--trust-proxy values', () => {
  it('takes addresses and CIDR ranges, IPv4 and IPv6, comma-separated', () => {
    expect(trustedProxies('10.0.0.0/8, 192.168.1.5,fd00::/8,::1')).toEqual(['10.0.0.0/8', '192.168.1.5', 'fd00::/8', '::1']);
  });

  it.each(['', 'balancer.local', '10.0.0.0/33', '10.0.0/8', 'fd00::/129', '10.0.0.0/8/1', '10.0.0.0/x'])('refuses %j', (value) => {
    expect(() => trustedProxies(value)).toThrow(InvalidArgumentError);
  });
});

describe('the client address behind a balancer', () => {
  let t: TestServer | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  /** The address the request log gives for one request that carries X-Forwarded-For. */
  async function loggedAddress(trustProxy: string[] | undefined): Promise<unknown> {
    const logs = collectedLogs('info');
    t = await startTestServer({ logger: logs.logger, trustProxy });
    const response = await fetch(`${t.url}/healthz?probe=1`, { headers: { 'x-forwarded-for': '198.51.100.9, 203.0.113.7' } });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    const line = logs.lines.find((entry) => entry.msg === 'incoming request' && (entry.req as { url: string }).url === '/healthz?probe=1');
    return (line?.req as { remoteAddress?: string } | undefined)?.remoteAddress;
  }

  it('is the last untrusted address of X-Forwarded-For when the peer is a trusted balancer', async () => {
    expect(await loggedAddress(['127.0.0.1/32'])).toBe('203.0.113.7');
  });

  it('is the peer itself without --trust-proxy, and when the peer is not among the trusted', async () => {
    expect(await loggedAddress(undefined)).toBe('127.0.0.1');
    await t!.close();
    t = undefined;
    expect(await loggedAddress(['10.0.0.0/8'])).toBe('127.0.0.1');
  });
});
