import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import type { MqttClient } from 'mqtt';
import pg from 'pg';
import { ApiClient } from '../../src/client/api.js';
import { call } from './http.js';
import { connectGateway, provisionGateway, type TestGateway } from './mqtt.js';

/** A `serve` process's API as its administrator sees it (SCANHUB_ADMIN_PASSWORD given at start). */
export async function adminOf(url: string, password: string): Promise<{ admin: ApiClient; anonymous: ApiClient; token: string }> {
  const login = await call(url, 'POST', '/auth/login', { json: { email: 'admin@localhost', password } });
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${login.text}`);
  const token = (login.body as { id_token: string }).id_token;
  return { admin: new ApiClient(url, token), anonymous: new ApiClient(url), token };
}

/** `count` gateways provisioned through the API, each connected over MQTT/TLS with its certificate. */
export async function connectedGateways(api: { admin: ApiClient; anonymous: ApiClient }, count: number, reconnectPeriod = 0): Promise<{ gateway: TestGateway; client: MqttClient }[]> {
  const gateways = [];
  for (let i = 0; i < count; i++) gateways.push(await provisionGateway(api));
  // The client resends what was not acknowledged when it reconnects (mqtt.js keeps it in its outgoing store).
  return Promise.all(gateways.map(async (gateway) => ({ gateway, client: await connectGateway(gateway, { reconnectPeriod, reconnectOnConnackError: true }) })));
}

/**
 * QoS 1 scans from several gateways at a steady rate, each with its own id: which ids were
 * published and which got a PUBACK. Stops by itself after `max` messages.
 */
export class ScanLoad {
  readonly published: string[] = [];
  readonly acknowledged = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private waiters: { done: () => boolean; resolve: () => void }[] = [];

  constructor(
    private readonly gateways: { gateway: TestGateway; client: MqttClient }[],
    private readonly options: { everyMs: number; max: number; prefix: string; perTick?: number },
  ) {}

  /** Publishes `perTick` scans (default 1) from each gateway every `everyMs`, until stop() or `max`. */
  start(): void {
    this.timer = setInterval(() => {
      for (const { gateway, client } of this.gateways) {
        for (let i = 0; i < (this.options.perTick ?? 1); i++) {
          if (this.published.length >= this.options.max) return this.stop();
          this.publish(gateway, client);
        }
      }
    }, this.options.everyMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Publishes one scan now; resolves at its PUBACK (never rejects: an unacknowledged one simply stays pending). */
  publish(gateway: TestGateway, client: MqttClient): Promise<string> {
    const id = randomUUID();
    this.published.push(id);
    return new Promise((resolve) => {
      client.publish(gateway.topic, JSON.stringify({ id, type: 'scan', scan_code: `${this.options.prefix}-${this.published.length}` }), { qos: 1 }, (error) => {
        if (error) return;
        this.acknowledged.add(id);
        this.check();
        resolve(id);
      });
    });
  }

  /** Resolves once `count` ids in all were acknowledged. */
  acknowledgedAtLeast(count: number): Promise<void> {
    return this.until(() => this.acknowledged.size >= count);
  }

  /** Resolves once every published id was acknowledged. */
  allAcknowledged(): Promise<void> {
    return this.until(() => this.acknowledged.size === this.published.length);
  }

  private until(done: () => boolean): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ done, resolve }));
  }

  private check(): void {
    this.waiters = this.waiters.filter((waiter) => {
      if (!waiter.done()) return true;
      waiter.resolve();
      return false;
    });
  }
}

/** How often each event id is stored: in the SQLite file (opened read-only) or the PostgreSQL database. */
export async function storedIdCounts(where: { sqliteFile: string } | { postgresUrl: string }): Promise<Map<string, number>> {
  if ('sqliteFile' in where) {
    const db = new Database(where.sqliteFile, { readonly: true });
    try {
      const rows = db.prepare('SELECT id, count(*) AS n FROM events GROUP BY id').all() as { id: string; n: number }[];
      return new Map(rows.map((row) => [row.id, row.n]));
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: where.postgresUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; n: string }>('SELECT id, count(*) AS n FROM events GROUP BY id');
    return new Map(rows.map((row) => [row.id, Number(row.n)]));
  } finally {
    await client.end();
  }
}

/** The acknowledged ids not stored exactly once (expected: none). */
export function lostOrDuplicated(acknowledged: Iterable<string>, stored: Map<string, number>): string[] {
  return [...acknowledged].filter((id) => stored.get(id) !== 1);
}
