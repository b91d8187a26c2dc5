import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retryAfterMs } from '../../src/client/api.js';
import { outcome, runCli } from '../helpers/cli.js';

// The client honours Retry-After on 429 and 503 for requests safe to repeat (DESIGN.md "CLI
// conventions"): at most 3 tries and 30 s of waiting; never for a POST.

/** What the fake deployment answers, in turn; the last answer repeats. */
let answers: { status: number; headers?: Record<string, string>; body: unknown }[] = [];
let requests: { method: string; at: number }[] = [];
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    requests.push({ method: request.method!, at: Date.now() });
    const answer = answers.length > 1 ? answers.shift()! : answers[0]!;
    response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
    response.end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const env = () => ({ SCANHUB_URL: url, SCANHUB_TOKEN: 'token', SCANHUB_CUSTOMER: 'acme' });
const busy = (status: number, retryAfter: string) => ({ status, headers: { 'retry-after': retryAfter }, body: { title: 'Busy', details: 'Try again later.' } });
const noGateways = { status: 200, body: { items: [], links: {} } };

describe('Retry-After', () => {
  it('a GET answered 503 then 429 with Retry-After is sent again after the wait, and succeeds', async () => {
    [answers, requests] = [[busy(503, '1'), busy(429, '0'), noGateways], []];
    expect(outcome(await runCli(['gateways', 'list'], { env: env() }))).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(requests.map((r) => r.method)).toEqual(['GET', 'GET', 'GET']);
    expect(requests[1]!.at - requests[0]!.at).toBeGreaterThanOrEqual(1000);
  });

  it('gives up after 3 tries with the last answer', async () => {
    [answers, requests] = [[busy(503, '0')], []];
    expect(outcome(await runCli(['gateways', 'list'], { env: env() }))).toEqual({ code: 1, stdout: '', stderr: 'scanhub: busy: Try again later\n' });
    expect(requests).toHaveLength(3);
  });

  it('does not wait beyond 30 s in all, nor repeat a POST', async () => {
    [answers, requests] = [[busy(503, '31')], []];
    expect((await runCli(['gateways', 'list'], { env: env() })).code).toBe(1);
    expect(requests).toHaveLength(1);
    [answers, requests] = [[busy(429, '0')], []];
    expect((await runCli(['gateways', 'create', '--name', 'd', '--usecase', 'u', '--station', 's'], { env: env() })).code).toBe(1);
    expect(requests.map((r) => r.method)).toEqual(['POST']);
  });

  it('reads seconds and HTTP dates (RFC 9110 section 10.2.3)', () => {
    const now = Date.parse('2026-11-27T10:00:00Z');
    expect([retryAfterMs('2', now), retryAfterMs('Fri, 27 Nov 2026 10:00:05 GMT', now), retryAfterMs('soon', now), retryAfterMs(undefined, now)]).toEqual([2000, 5000, undefined, undefined]);
  });
});

// How the CLI says a 403 (src/cli/io.ts describeError): exit 4 only for a missing permission or
// access, exit 1 for a refused state (DESIGN.md "CLI conventions").
describe('a 403', () => {
  it.each([
    ['Your role USER_ROLE lacks the permission "gateway.read" this call needs; ask an administrator.', 4, 'not allowed: Your role USER_ROLE lacks the permission "gateway.read" this call needs; ask an administrator'],
    ['This download link has expired: request a new one.', 1, 'refused: This download link has expired: request a new one'],
  ])('%s: exit %i', async (details, code, message) => {
    [answers, requests] = [[{ status: 403, body: { title: 'Forbidden', details } }], []];
    expect(outcome(await runCli(['gateways', 'list'], { env: env() }))).toEqual({ code, stdout: '', stderr: `scanhub: ${message}\n` });
  });
});
