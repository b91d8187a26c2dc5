// The webhook sender (docs/webhooks.md "URLs", "Delivery"): DNS answers checked at connect time,
// redirects not followed, a deadline, the answer read up to 64 KiB.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedLookup, WebhookSender } from '../../src/webhooks/sender.js';

let server: Server;
let port: number;
const served: string[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    served.push(request.url!);
    request.resume();
    if (request.url === '/redirect') response.writeHead(302, { location: '/target' }).end();
    else if (request.url === '/slow') setTimeout(() => response.writeHead(200).end(), 2_000);
    else if (request.url === '/huge') {
      response.writeHead(200);
      // Far more than the cap, and never ended: only the cap can finish the read.
      response.write(Buffer.alloc(1024 * 1024));
    } else response.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('WebhookSender', () => {
  it('refuses a name whose DNS answer is loopback, at connect time, unless loopback is allowed', async () => {
    const refused = await new Promise<string>((resolve) => guardedLookup(false)('localhost', {}, (error) => resolve(error?.message ?? 'accepted')));
    expect(refused).toMatch(/^localhost resolves to (127\.0\.0\.1|::1) is loopback \(allowed only with serve --webhook-allow-loopback\)$/);
    const allowed = await new Promise<string>((resolve) => guardedLookup(true)('localhost', {}, (error, address) => resolve(error ? error.message : String(address))));
    expect(['127.0.0.1', '::1']).toContain(allowed);
  });

  it('does not follow a redirect: the 3xx is the answer', async () => {
    const sender = new WebhookSender({ allowLoopback: true, timeoutMs: 5_000 });
    served.length = 0;
    expect(await sender.send(`http://127.0.0.1:${port}/redirect`, {}, '{}')).toMatchObject({ status: 302 });
    expect(served).toEqual(['/redirect']);
    sender.close();
  });

  it('gives up on a receiver that does not answer within the deadline', async () => {
    const sender = new WebhookSender({ allowLoopback: true, timeoutMs: 300 });
    const result = await sender.send(`http://127.0.0.1:${port}/slow`, {}, '{}');
    expect(result).toMatchObject({ status: null, error: 'no answer within 0.3 s' });
    expect(result.latencyMs).toBeGreaterThanOrEqual(290);
    sender.close();
  });

  it('reads at most 64 KiB of an answer', async () => {
    const sender = new WebhookSender({ allowLoopback: true, timeoutMs: 5_000 });
    expect(await sender.send(`http://127.0.0.1:${port}/huge`, {}, '{}')).toMatchObject({ status: 200 });
    sender.close();
  });

  it('refuses a loopback URL when loopback is not allowed, without connecting', async () => {
    const sender = new WebhookSender({ allowLoopback: false, timeoutMs: 5_000 });
    served.length = 0;
    expect(await sender.send(`http://127.0.0.1:${port}/ok`, {}, '{}')).toEqual({ status: null, latencyMs: 0, error: '127.0.0.1 is loopback (allowed only with serve --webhook-allow-loopback)' });
    expect(served).toEqual([]);
    sender.close();
  });
});
