import { randomUUID } from 'node:crypto';
import { get } from 'node:http';
import type { MqttClient } from 'mqtt';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ApiClient } from '../../src/client/api.js';
import { call } from '../helpers/http.js';
import { CLUSTER_ADMIN_EMAIL, CLUSTER_ADMIN_PASSWORD, startCluster, type Cluster, type ClusterInstance, type ServerState } from '../helpers/cluster.js';
import { GatewayClients, provisionGateway, type TestGateway } from '../helpers/mqtt.js';
import { openPkcs12 } from '../helpers/pkcs12.js';
import { describePostgres } from '../helpers/postgres.js';
import { until } from '../helpers/until.js';

// Only in vitest's `postgres` project (vitest.config.ts): two `scanhub serve` processes on one
// PostgreSQL database behind a real HAProxy running deploy/haproxy.cfg (test/helpers/cluster.ts).

const GATEWAYS = 20;
/** Each gateway publishes one event this often (20 gateways: 400 events/s). */
const EVERY_MS = 50;
/** Acknowledged events per gateway before the kill, and of events published after it. */
const BEFORE_KILL = 5;
const AFTER_KILL = 10;

/** The CA certificate a PKCS#12 of the service carries (the one that is not the gateway's own). */
function caOf(pkcs12: Buffer): string {
  const { certificates, certificatePems } = openPkcs12(pkcs12);
  const index = certificates.findIndex((cert) => cert.ca);
  if (index < 0) throw new Error('the PKCS#12 holds no CA certificate');
  return certificatePems[index]!;
}

async function login(url: string): Promise<string> {
  const answer = await call(url, 'POST', '/auth/login', { json: { email: CLUSTER_ADMIN_EMAIL, password: CLUSTER_ADMIN_PASSWORD } });
  expect(answer.status).toBe(200);
  return (answer.body as { id_token: string }).id_token;
}

/** The address the test's clients connect from: neither the balancer's nor an instance's. */
const CLIENT_ADDRESS = '127.0.0.9';

describePostgres('several scanhub serve processes on one PostgreSQL behind HAProxy (deploy/haproxy.cfg)', () => {
  let cluster: Cluster;
  const clients = new GatewayClients();

  /** The first JSON log line of any instance that satisfies `match`, and that instance (waited for: stdout is a pipe). */
  async function logged(match: (entry: Record<string, unknown>) => boolean): Promise<{ entry: Record<string, unknown>; instance: ClusterInstance }> {
    let found: { entry: Record<string, unknown>; instance: ClusterInstance } | undefined;
    const search = () => {
      for (const instance of cluster.instances) {
        const lines = instance.serve.stdout().split('\n').filter((line) => line.startsWith('{'));
        const entry = lines.map((line) => JSON.parse(line) as Record<string, unknown>).find(match);
        if (entry) return { entry, instance };
      }
      return undefined;
    };
    await until(() => (found = search()) !== undefined, { what: () => 'no such log line', everyMs: 10 });
    return found!;
  }

  beforeAll(async () => {
    cluster = await startCluster({ env: { SCANHUB_LOG_LEVEL: 'info' } });
  }, 60_000);
  afterAll(async () => {
    await clients.endAll();
    await cluster?.close();
  });

  it('starts two instances at the same moment on an empty database: one bootstrap, one CA', async () => {
    const [a, b] = cluster.instances;
    const bootstrapped = cluster.instances.filter((instance) => instance.serve.stderr().includes('Created customer "acme"'));
    expect(bootstrapped).toHaveLength(1);
    const provisioned = await Promise.all([a!, b!].map(async (instance) => {
      const admin = new ApiClient(instance.url, await login(instance.url));
      return provisionGateway({ admin, anonymous: new ApiClient(instance.url) });
    }));
    // Each instance issues certificates with the CA it loaded at start.
    expect(caOf(provisioned[0]!.pkcs12)).toBe(caOf(provisioned[1]!.pkcs12));
  });

  it('takes on instance B the IdToken, the page token, the signed link and the provisioning token that instance A made', async () => {
    const [a, b] = cluster.instances;
    const token = await login(a!.url);
    const onB = await call(b!.url, 'GET', '/acme/gateways', { token });
    expect(onB.status).toBe(200);

    const first = await call(a!.url, 'GET', '/acme/gateways?limit=1', { token });
    const next = (first.body as { links: { next: string } }).links.next;
    const [secondOnA, secondOnB] = await Promise.all([call(a!.url, 'GET', next, { token }), call(b!.url, 'GET', next, { token })]);
    expect(secondOnB.text).toBe(secondOnA.text);
    expect(secondOnB.headers.etag).toBe(secondOnA.headers.etag);
    expect((secondOnB.body as { items: unknown[] }).items).toHaveLength(1);

    const exported = await call(a!.url, 'GET', '/acme/events/export?start_time_millis=0', { token });
    expect(exported.status).toBe(201);
    const link = new URL((exported.body as { download_link: string }).download_link);
    // Handed out on the balancer's address (the public URL); fetched here from B itself.
    expect(link.origin).toBe(cluster.url);
    const download = await call(b!.url, 'GET', link.pathname + link.search);
    expect(download.status).toBe(200);
    expect(download.text).toMatch(/^id,/);

    // A provisioning token prepared on A is redeemed on B.
    const gateway = await call(a!.url, 'POST', '/acme/gateways', { token, json: { name: 'across', usecase: 'picking', station: 's1' } });
    const gatewayId = (gateway.body as { id: string }).id;
    const prepared = await call(a!.url, 'POST', `/acme/gateways/${gatewayId}/prepare-provisioning`, { token });
    const { registration_path, token: provisioningToken } = prepared.body as { registration_path: string; token: string };
    const redeemed = await call(b!.url, 'POST', registration_path, { json: { token: provisioningToken } });
    expect(redeemed.status).toBe(200);
    expect((redeemed.body as { certificate_common_name: string }).certificate_common_name).toBe(gatewayId);
  });

  it('names the client behind the balancer: X-Forwarded-For on the API, the PROXY header on MQTT', async () => {
    // node:http, whose requests take a local address (undici's Agent ignores one).
    const status = await new Promise<number | undefined>((resolve, reject) => {
      get(`${cluster.url}/healthz?probe=forwarded`, { localAddress: CLIENT_ADDRESS }, (response) => {
        response.resume().on('end', () => resolve(response.statusCode));
      }).on('error', reject);
    });
    expect(status).toBe(200);
    const { entry: incoming } = await logged((entry) => (entry.req as { url?: string } | undefined)?.url === '/healthz?probe=forwarded');
    expect((incoming.req as { remoteAddress: string }).remoteAddress).toBe(CLIENT_ADDRESS);

    const token = await login(cluster.url);
    const gateway = await provisionGateway({ admin: new ApiClient(cluster.url, token), anonymous: new ApiClient(cluster.url) });
    await clients.connect(gateway, { localAddress: CLIENT_ADDRESS });
    const { entry: connected } = await logged((entry) => entry.msg === 'gateway connected' && entry.gateway_id === gateway.id);
    expect(connected.remote).toBe(CLIENT_ADDRESS);
    await clients.endAll();
  });

  it('disconnects a gateway from the instance that holds it within one second of its deletion through the other', async () => {
    const token = await login(cluster.url);
    const gateway = await provisionGateway({ admin: new ApiClient(cluster.url, token), anonymous: new ApiClient(cluster.url) });
    const client = await clients.connect(gateway);
    // The balancer chose the instance; the deletion goes to the other one directly.
    const { instance: holder } = await logged((entry) => entry.msg === 'gateway connected' && entry.gateway_id === gateway.id);
    const other = cluster.instances.find((instance) => instance !== holder)!;
    const closed = new Promise<number>((resolve) => client.once('close', () => resolve(Date.now())));
    const deleting = Date.now();
    await new ApiClient(other.url, token).delete(`/acme/gateways/${gateway.id}`);
    const disconnectedAfter = (await closed) - deleting;
    expect(disconnectedAfter).toBeLessThan(1000);
    console.info(`cluster: deleted through ${other.name}, disconnected from ${holder.name} ${disconnectedAfter} ms after the DELETE was sent`);
    await expect(clients.connect(gateway)).rejects.toMatchObject({ code: 5 });
    await clients.endAll();
  });

  it('keeps every event of gateways publishing through the balancer when one instance is killed mid-ingest', async () => {
    const token = await login(cluster.url);
    const admin = new ApiClient(cluster.url, token);
    const anonymous = new ApiClient(cluster.url);
    const gateways: TestGateway[] = [];
    for (let i = 0; i < GATEWAYS; i += 5) {
      gateways.push(...(await Promise.all([0, 1, 2, 3, 4].map(() => provisionGateway({ admin, anonymous })))));
    }
    expect(new Set(gateways.map((g) => g.endpoint))).toEqual(new Set([`mqtts://127.0.0.1:${cluster.mqttPort}`]));

    // Gateways that reconnect by themselves and resend what was not acknowledged (mqtt.js keeps
    // unacknowledged QoS 1 publishes and sends them again after reconnecting).
    const connected: MqttClient[] = await Promise.all(
      gateways.map((gateway) => clients.connect(gateway, { reconnectPeriod: 100, reconnectOnConnackError: true, connectTimeout: 5000 })),
    );
    // leastconn spreads them over both (settled: an earlier test's connection may still be closing).
    const [victim, survivor] = cluster.instances;
    const mqttSessions = (states: ServerState[], name: string) => states.find((s) => s.backend === 'scanhub_mqtt' && s.server === name)!.sessions;
    const spread = await cluster.serversSatisfy(
      (states) => mqttSessions(states, victim!.name) + mqttSessions(states, survivor!.name) === GATEWAYS,
      `holding ${GATEWAYS} gateways`,
    );
    const onVictim = mqttSessions(spread, victim!.name);
    expect(onVictim).toBeGreaterThan(0);
    expect(mqttSessions(spread, survivor!.name)).toBeGreaterThan(0);

    const published: string[] = [];
    const acknowledged = new Set<string>();
    const publishes: Promise<void>[] = [];
    let killedAt = Infinity;
    const ackedBefore = gateways.map(() => 0);
    const ackedAfter = gateways.map(() => 0);
    /** When each gateway's first event published after the kill was acknowledged. */
    const backAt: number[] = [];
    const dropped = new Set<number>();
    const reconnected = new Set<number>();
    connected.forEach((client, g) => {
      client.on('close', () => Date.now() >= killedAt && dropped.add(g));
      client.on('connect', () => dropped.has(g) && reconnected.add(g));
    });
    const publish = (g: number) => {
      const id = randomUUID();
      const sentAt = Date.now();
      published.push(id);
      const payload = JSON.stringify({ id, type: 'scan', scan_code: `C-${g}-${published.length}` });
      publishes.push(
        connected[g]!.publishAsync(gateways[g]!.topic, payload, { qos: 1 }).then(() => {
          acknowledged.add(id);
          if (sentAt <= killedAt) return void ackedBefore[g]!++;
          ackedAfter[g]!++;
          backAt[g] ??= Date.now();
        }),
      );
    };
    // Each gateway publishes every EVERY_MS of real time, as devices do: the load runs on across the kill.
    let publishing = true;
    const publishers = connected.map(async (_client, g) => {
      while (publishing) {
        publish(g);
        await new Promise((resolve) => setTimeout(resolve, EVERY_MS));
      }
    });

    await until(() => ackedBefore.every((n) => n >= BEFORE_KILL), { what: () => `acknowledged before the kill: ${ackedBefore}`, everyMs: 10 });
    // A burst right before the kill: the victim's gateways certainly have publishes in flight
    // (sent, maybe stored, not acknowledged) that they must send again to the survivor.
    for (let g = 0; g < GATEWAYS; g++) for (let k = 0; k < 3; k++) publish(g);
    const unacknowledgedAtKill = published.length - acknowledged.size;
    killedAt = Date.now();
    await victim!.kill();
    await until(() => ackedAfter.every((n) => n >= AFTER_KILL), { what: () => `acknowledged after the kill: ${ackedAfter}`, everyMs: 10 });
    publishing = false;
    await Promise.all(publishers);
    await Promise.all(publishes);
    expect(acknowledged.size).toBe(published.length);
    // The victim's gateways lost their connection and came back.
    expect(dropped.size).toBe(onVictim);
    expect([...reconnected].sort()).toEqual([...dropped].sort());

    // Every gateway is on the survivor; HAProxy's checks took the killed one out.
    const servers = await cluster.serversSatisfy(
      (states) => states.some((s) => s.backend === 'scanhub_mqtt' && s.server === victim!.name && s.status === 'DOWN'),
      'the killed instance down',
    );
    expect(servers.filter((s) => s.backend === 'scanhub_mqtt').map((s) => [s.server, s.status, s.sessions])).toEqual([
      [victim!.name, 'DOWN', 0],
      [survivor!.name, 'UP', GATEWAYS],
    ]);

    const db = new pg.Client({ connectionString: cluster.database });
    await db.connect();
    try {
      const { rows } = await db.query<{ id: string; n: string }>('SELECT id, count(*) AS n FROM events GROUP BY id');
      const stored = new Map(rows.map((row) => [row.id, Number(row.n)]));
      expect(published.filter((id) => stored.get(id) !== 1)).toEqual([]);
      expect(stored.size).toBe(published.length);
    } finally {
      await db.end();
    }
    const back = Math.max(...backAt) - killedAt;
    console.info(
      `cluster: ${published.length} events from ${GATEWAYS} gateways, ${unacknowledgedAtKill} unacknowledged at kill -9; ` +
        `every gateway acknowledged again within ${back} ms`,
    );
  }, 60_000);
});
