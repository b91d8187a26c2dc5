// GET /metrics (DESIGN.md "Metrics", docs/metrics.md): scraped from a real server after real MQTT
// over TLS and real HTTP calls, on whichever store the project runs (SQLite or PostgreSQL).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricsRefusal } from '../../../src/server/routes/metrics.js';
import { call } from '../../helpers/http.js';
import { GatewayClients, connectGateway, provisionGateway, type TestGateway } from '../../helpers/mqtt.js';
import { freePort, spawnServe, stop } from '../../helpers/serve-process.js';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';
import { testDatabase } from '../../helpers/test-store.js';

/** The samples of a scrape: `name{a="x",b="y"}` (labels as exposed) -> value. */
function samples(text: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    found.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return found;
}

/** The metric names a scrape exposes (histograms with their _bucket, _sum and _count). */
const namesOf = (scrape: Map<string, number>) => new Set([...scrape.keys()].map((key) => key.replace(/\{.*$/, '')));

const TOKEN = 'metrics-token-0123456789';
const scan = (id: string) => JSON.stringify({ id, type: 'scan', scan_code: 'A-1', created: 1_700_000_000_000 });
const eventId = (i: number) => `1b7e3a52-5f0e-4a7d-9c61-${String(i).padStart(12, '0')}`;

let t: TestServer;
/** Its balancer: a trusted proxy whose X-Forwarded-For names the client. */
let viaBalancer: Agent;
const clients = new GatewayClients();

beforeAll(async () => {
  t = await startTestServer({ trustProxy: ['127.0.0.2'] });
  viaBalancer = new Agent({ localAddress: '127.0.0.2' });
});
afterAll(async () => {
  await clients.endAll();
  await viaBalancer.close();
  await t.close();
});

async function scrape(url = t.url): Promise<Map<string, number>> {
  const answer = await call(url, 'GET', '/metrics');
  expect(answer.status).toBe(200);
  return samples(answer.text);
}

describe('GET /metrics', () => {
  it('is the Prometheus text format with the process metrics', async () => {
    const answer = await call(t.url, 'GET', '/metrics');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(answer.text).toContain('# TYPE scanhub_ingest_events_total counter\n');
    expect(answer.text).toContain('# TYPE scanhub_ingest_commit_duration_seconds histogram\n');
    const names = namesOf(samples(answer.text));
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
      expect({ name, exposed: names.has(name) }).toEqual({ name, exposed: true });
    }
  });

  it('counts MQTT ingest over TLS exactly: messages, events, duplicates, invalid ones, batches and their commit times', async () => {
    const before = await scrape();
    const gateway = await provisionGateway(t);
    const client = await clients.connect(gateway);
    const published = 25;
    await Promise.all(Array.from({ length: published }, (_, i) => client.publishAsync(gateway.topic, scan(eventId(i)), { qos: 1 })));
    await client.publishAsync(gateway.topic, scan(eventId(3)), { qos: 1 }); // a resend: acknowledged, not stored again
    await client.publishAsync(gateway.topic, 'not json', { qos: 1 }); // acknowledged and dropped

    const after = await scrape();
    const grew = (key: string) => after.get(key)! - (before.get(key) ?? 0);
    expect({
      messages: grew('scanhub_ingest_messages_total'),
      events: grew('scanhub_ingest_events_total'),
      duplicates: grew('scanhub_ingest_duplicate_events_total'),
      invalid: grew('scanhub_ingest_invalid_messages_total'),
      failed: grew('scanhub_ingest_failed_messages_total'),
      connections: after.get('scanhub_mqtt_connections'),
      accepted: grew('scanhub_mqtt_connections_accepted_total'),
    }).toEqual({ messages: published + 2, events: published, duplicates: 1, invalid: 1, failed: 0, connections: 1, accepted: 1 });
    // Every committed batch was timed once, and took some time.
    const batches = after.get('scanhub_ingest_batches_total')!;
    expect(batches).toBeGreaterThanOrEqual(3);
    expect(batches).toBeLessThanOrEqual(published + 2);
    expect(after.get('scanhub_ingest_commit_duration_seconds_count')).toBe(batches);
    expect(after.get('scanhub_ingest_commit_duration_seconds_bucket{le="+Inf"}')).toBe(batches);
    expect(after.get('scanhub_ingest_commit_duration_seconds_sum')).toBeGreaterThan(0);
    // The figures are what the broker itself counted.
    expect(after.get('scanhub_ingest_events_total')).toBe(t.server.broker.ingest.events);
  });

  it('counts refused handshakes under their reason: no certificate, a deleted gateway, a revoked certificate', async () => {
    const refused = (scrape: Map<string, number>, reason: string) => scrape.get(`scanhub_mqtt_refused_handshakes_total{reason="${reason}"}`);
    const before = await scrape();
    expect(refused(before, 'tls_handshake_failed')).toBe(0);

    // No client certificate: the TLS handshake fails.
    const gateway = await provisionGateway(t);
    await expect(mqtt.connectAsync(gateway.endpoint, { ca: Buffer.from(t.server.ctx.ca.certPem), reconnectPeriod: 0 })).rejects.toThrow(/certificate required/);
    // A deleted gateway: CONNACK 5.
    const deleted = await provisionGateway(t);
    await t.admin.delete(`/${CUSTOMER}/gateways/${deleted.id}`);
    await expect(connectGateway(deleted)).rejects.toMatchObject({ code: 5 });
    // A revoked certificate: CONNACK 5 as well, counted apart.
    const revoked = await provisionGateway(t);
    await t.admin.post(`/${CUSTOMER}/gateways/${revoked.id}/revoke-certificate`);
    await expect(connectGateway(revoked)).rejects.toMatchObject({ code: 5 });

    const after = await scrape();
    const reasons = [...after.keys()].filter((key) => key.startsWith('scanhub_mqtt_refused_handshakes_total{')).map((key) => key.match(/reason="(.*)"/)![1]);
    expect(reasons).toEqual([
      'over_cap',
      'proxy_header',
      'handshake_timeout',
      'tls_handshake_failed',
      'tls_certificate_expired',
      'connect_timeout',
      'protocol_level',
      'unknown_gateway',
      'certificate_revoked',
      'certificate_pending',
      'store_unavailable',
    ]);
    expect(Object.fromEntries(reasons.map((reason) => [reason, refused(after, reason)! - refused(before, reason)!]))).toEqual({
      over_cap: 0,
      proxy_header: 0,
      handshake_timeout: 0,
      tls_handshake_failed: 1,
      tls_certificate_expired: 0,
      connect_timeout: 0,
      protocol_level: 0,
      unknown_gateway: 1,
      certificate_revoked: 1,
      certificate_pending: 0,
      store_unavailable: 0,
    });
  });

  it('times HTTP requests by method, route template (never the path with its ids) and status', async () => {
    const gateway: TestGateway = await provisionGateway(t);
    expect((await call(t.url, 'GET', `/${CUSTOMER}/gateways/${gateway.id}`, { token: t.adminToken })).status).toBe(200);
    expect((await call(t.url, 'GET', `/${CUSTOMER}/gateways/no-such-gateway`, { token: t.adminToken })).status).toBe(404);
    expect((await call(t.url, 'GET', '/no/such/path/f00d')).status).toBe(404);
    expect((await call(t.url, 'DELETE', '/healthz')).status).toBe(405);

    const answer = await call(t.url, 'GET', '/metrics');
    const after = samples(answer.text);
    const count = (labels: string) => after.get(`scanhub_http_request_duration_seconds_count{${labels}}`);
    expect(count('method="GET",route="/:customer_id/gateways/:gateway_id",status="200"')).toBe(1);
    expect(count('method="GET",route="/:customer_id/gateways/:gateway_id",status="404"')).toBe(1);
    expect(count('method="GET",route="unmatched",status="404"')).toBe(1);
    expect(count('method="DELETE",route="unmatched",status="405"')).toBe(1);
    expect(count('method="POST",route="/provisioning",status="200"')).toBeGreaterThanOrEqual(1);
    expect(after.get('scanhub_http_request_duration_seconds_sum{method="GET",route="/:customer_id/gateways/:gateway_id",status="200"}')).toBeGreaterThan(0);
    // No label carries an id or a raw path.
    expect(answer.text).not.toContain(gateway.id);
    expect(answer.text).not.toContain('no-such-gateway');
    expect(answer.text).not.toContain('f00d');
  });

  it('reports export tasks by state and the database size, read from the store at scrape time', async () => {
    const before = await scrape();
    const { task } = await t.admin.post<{ task: string }>(`/${CUSTOMER}/events/export/tasks`);
    await t.server.ctx.exporter.finished((await t.server.ctx.store.exportTasks.byId(CUSTOMER, task))!);
    const after = await scrape();
    const tasks = (scrape: Map<string, number>) =>
      Object.fromEntries(['PENDING', 'SUCCESSFUL', 'FAILED'].map((state) => [state, scrape.get(`scanhub_export_tasks{state="${state}"}`)]));
    expect(tasks(before)).toEqual({ PENDING: 0, SUCCESSFUL: 0, FAILED: 0 });
    expect(tasks(after)).toEqual({ PENDING: 0, SUCCESSFUL: 1, FAILED: 0 });
    expect(after.get('scanhub_database_size_bytes')).toBeGreaterThan(100_000);
  });
});

describe('who may scrape', () => {
  const forbiddenFrom = (client: string) => ({
    status: 403,
    body: {
      title: 'Forbidden',
      details: `/metrics is served only to this machine (loopback) while SCANHUB_METRICS_TOKEN is unset, and this request comes from ${client}: scrape from this machine, or set SCANHUB_METRICS_TOKEN on the server and send it as a Bearer token.`,
    },
  });

  it('without SCANHUB_METRICS_TOKEN: a loopback peer, not the client a trusted balancer names elsewhere, whatever headers say', async () => {
    const metrics = (options: Parameters<typeof call>[3]) => call(t.url, 'GET', '/metrics', options).then(({ status, body }) => ({ status, body }));
    expect((await metrics({})).status).toBe(200);
    // From 127.0.0.1, not a trusted balancer: its X-Forwarded-For is ignored.
    expect((await metrics({ headers: { 'x-forwarded-for': '203.0.113.7' } })).status).toBe(200);
    // Through the trusted balancer (127.0.0.2) for a client elsewhere, or for one on this machine.
    expect(await metrics({ dispatcher: viaBalancer, headers: { 'x-forwarded-for': '203.0.113.7' } })).toEqual(forbiddenFrom('203.0.113.7'));
    expect((await metrics({ dispatcher: viaBalancer, headers: { 'x-forwarded-for': '127.0.0.1' } })).status).toBe(200);
    // A token that nobody asked for changes nothing; an IdToken is no pass from elsewhere.
    expect(await metrics({ dispatcher: viaBalancer, token: t.adminToken, headers: { 'x-forwarded-for': '198.51.100.1' } })).toEqual(forbiddenFrom('198.51.100.1'));
  });

  it.each([
    ['a loopback peer', { peer: '127.0.0.1', client: '127.0.0.1' }, undefined],
    ['another loopback address', { peer: '127.8.9.10', client: '127.8.9.10' }, undefined],
    ['IPv6 loopback', { peer: '::1', client: '::1' }, undefined],
    ['IPv4-mapped loopback', { peer: '::ffff:127.0.0.1', client: '::ffff:127.0.0.1' }, undefined],
    ['a peer on the network', { peer: '10.1.2.3', client: '10.1.2.3' }, 403],
    ['an IPv4-mapped peer on the network', { peer: '::ffff:192.0.2.1', client: '::ffff:192.0.2.1' }, 403],
    ['a peer on the network naming a loopback client', { peer: '10.1.2.3', client: '127.0.0.1' }, 403],
    ['a socket already gone', { peer: undefined, client: '127.0.0.1' }, 403],
  ] as const)('without a token decides by the socket (and the balancer\'s client): %s', (_name, caller, status) => {
    expect(metricsRefusal(undefined, { authorization: undefined, ...caller })?.statusCode).toBe(status);
  });

  describe('with SCANHUB_METRICS_TOKEN', () => {
    let withToken: TestServer;
    beforeAll(async () => {
      withToken = await startTestServer({ metricsToken: TOKEN });
    });
    afterAll(async () => withToken.close());

    it('needs it as a Bearer token (any case of Bearer, or bare), from anywhere, loopback included', async () => {
      const metrics = (authorization?: string) =>
        call(withToken.url, 'GET', '/metrics', authorization === undefined ? {} : { authorization }).then(({ status, body }) => ({ status, body }));
      const missing = {
        status: 401,
        body: { title: 'Unauthorized', details: '/metrics needs the metrics token: send "Authorization: Bearer <SCANHUB_METRICS_TOKEN>".' },
      };
      const wrong = { status: 401, body: { title: 'Unauthorized', details: 'The token in the Authorization header is not the metrics token (SCANHUB_METRICS_TOKEN of the server).' } };
      expect(await metrics()).toEqual(missing);
      expect(await metrics('')).toEqual(missing);
      expect(await metrics(`Bearer ${TOKEN}x`)).toEqual(wrong);
      expect(await metrics(`Bearer ${TOKEN.slice(0, -1)}`)).toEqual(wrong);
      expect(await metrics(`Bearer ${withToken.adminToken}`)).toEqual(wrong);
      expect((await metrics(`Bearer ${TOKEN}`)).status).toBe(200);
      expect((await metrics(`bearer ${TOKEN}`)).status).toBe(200);
      expect((await metrics(TOKEN)).status).toBe(200);
      // The token passes from elsewhere too.
      expect(metricsRefusal(TOKEN, { authorization: `Bearer ${TOKEN}`, peer: '10.1.2.3', client: '10.1.2.3' })).toBeUndefined();
    });
  });
});

describe('docs/grafana-dashboard.json', () => {
  it('uses only metric names that a running server exposes, in every panel', async () => {
    const dashboard = JSON.parse(readFileSync(new URL('../../../docs/grafana-dashboard.json', import.meta.url), 'utf8')) as { panels: unknown[] };
    const expressions: string[] = [];
    const collect = (node: unknown) => {
      if (Array.isArray(node)) node.forEach(collect);
      else if (node && typeof node === 'object') {
        for (const [key, value] of Object.entries(node)) {
          if (key === 'expr' && typeof value === 'string') expressions.push(value);
          else collect(value);
        }
      }
    };
    collect(dashboard.panels);
    expect(expressions.length).toBeGreaterThanOrEqual(10);
    const exposed = namesOf(await scrape());
    const used = expressions.map((expr) => ({ expr, names: expr.match(/\b(?:scanhub|process|nodejs)_[a-z0-9_]+/g) ?? [] }));
    // Every expression queries at least one metric of ours, and each of its names is exposed.
    expect(used.filter(({ names }) => names.length === 0).map(({ expr }) => expr)).toEqual([]);
    expect(used.flatMap(({ names }) => names.filter((name) => !exposed.has(name)))).toEqual([]);
  });
});

describe('scanhub serve (as a process)', () => {
  it('takes the token from SCANHUB_METRICS_TOKEN', async () => {
    const database = await testDatabase();
    const dataDir = mkdtempSync(join(tmpdir(), 'scanhub-metrics-'));
    const port = await freePort();
    const serve = spawnServe(['--data-dir', dataDir, '--port', String(port), '--mqtt-port', '0'], { SCANHUB_ADMIN_PASSWORD: 'admin-password-123', SCANHUB_METRICS_TOKEN: TOKEN }, database);
    try {
      await serve.stderrMatches(/scanhub is serving/);
      const url = `http://127.0.0.1:${port}`;
      expect((await call(url, 'GET', '/metrics')).status).toBe(401);
      const answer = await call(url, 'GET', '/metrics', { token: TOKEN });
      expect(answer.status).toBe(200);
      expect(samples(answer.text).get('scanhub_mqtt_connections')).toBe(0);
    } finally {
      expect((await stop(serve)).code).toBe(0);
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
