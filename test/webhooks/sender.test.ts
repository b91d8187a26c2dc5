// The webhook sender (docs/webhooks.md "URLs", "Delivery"): DNS answers checked at connect time,
// redirects not followed, a deadline, the answer read up to 64 KiB.
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createSecureContext } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedLookup, WebhookSender } from '../../src/webhooks/sender.js';
import { readFixture } from '../helpers/fixtures.js';

let server: Server;
let port: number;
const served: string[] = [];
/** The raw headers and body of the last request to /echo. */
let echoed: { headers: string[]; body: string } | undefined;

beforeAll(async () => {
  server = createServer((request, response) => {
    served.push(request.url!);
    if (request.url!.startsWith('/echo')) {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        echoed = { headers: request.rawHeaders, body: Buffer.concat(chunks).toString() };
        response.writeHead(204).end();
      });
      return;
    }
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

  it('sends the headers given, the type and length of the body, the user agent and the Host, on a kept-alive connection', async () => {
    const sender = new WebhookSender({ allowLoopback: true, timeoutMs: 5_000 });
    const body = [Buffer.from('{"a":'), Buffer.from('"é"}')];
    served.length = 0;
    expect(await sender.send(`http://127.0.0.1:${port}/echo?a=1&b=%20`, { 'webhook-id': 'd1', 'webhook-timestamp': '1700000000' }, body)).toMatchObject({ status: 204 });
    expect(served).toEqual(['/echo?a=1&b=%20']);
    expect(echoed).toEqual({
      headers: [
        'webhook-id', 'd1', 'webhook-timestamp', '1700000000', 'content-type', 'application/json', 'content-length', '10',
        'user-agent', 'scanhub-webhooks', 'Host', `127.0.0.1:${port}`, 'Connection', 'keep-alive',
      ],
      body: '{"a":"é"}',
    });
    sender.close();
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

  it('stops the requests in flight with a signal when it aborts, and only those', async () => {
    const sender = new WebhookSender({ allowLoopback: true, timeoutMs: 5_000 });
    const stop = new AbortController();
    const other = new AbortController();
    const url = `http://127.0.0.1:${port}/slow`;
    const sent = [sender.send(url, {}, '{}', stop.signal), sender.send(url, {}, '{}', stop.signal), sender.send(url, {}, '{}', other.signal)];
    await new Promise((resolve) => setTimeout(resolve, 100));
    stop.abort();
    const [first, second, third] = await Promise.all(sent);
    expect([first, second].map(({ status, error }) => ({ status, error }))).toEqual([
      { status: null, error: 'stopped' },
      { status: null, error: 'stopped' },
    ]);
    expect(first!.latencyMs).toBeLessThan(1_000);
    expect(third).toMatchObject({ status: 200 });
    sender.close();
  });

  it('names the host for TLS (SNI) as Node does: the name, and no name for an address', async () => {
    const key = readFixture('forge-ca/ca.key');
    const cert = readFixture('forge-ca/ca.crt');
    const names: string[] = [];
    let connections = 0;
    const tls = createHttpsServer(
      {
        key,
        cert,
        SNICallback: (name, done) => {
          names.push(name);
          done(null, createSecureContext({ key, cert }));
        },
      },
      (_request, response) => response.end(),
    );
    tls.on('connection', () => connections++);
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    const tlsPort = (tls.address() as AddressInfo).port;
    const sender = new WebhookSender({ allowLoopback: true, timeoutMs: 5_000 });
    // A CA's certificate, which the sender refuses for a server: each attempt ends after the handshake began.
    expect(await sender.send(`https://localhost:${tlsPort}/`, {}, '{}')).toMatchObject({ status: null, error: 'unsuitable certificate purpose' });
    expect(await sender.send(`https://127.0.0.1:${tlsPort}/`, {}, '{}')).toMatchObject({ status: null, error: 'unsuitable certificate purpose' });
    expect(connections).toBe(2);
    expect(names).toEqual(['localhost']);
    sender.close();
    tls.closeAllConnections();
    await new Promise((resolve) => tls.close(resolve));
  });
});
