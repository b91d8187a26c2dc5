import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EXPORT_LEASE_MS } from '../../src/export/exporter.js';
import { call } from '../helpers/http.js';
import { CLUSTER_ADMIN_EMAIL, CLUSTER_ADMIN_PASSWORD, startCluster, type Cluster } from '../helpers/cluster.js';
import { describePostgres } from '../helpers/postgres.js';
import { until } from '../helpers/until.js';

// An export task whose instance is killed with SIGKILL mid-export is finished by the other one
// once the lease ends (DESIGN.md "Scale-out": claimed with FOR UPDATE SKIP LOCKED and a lease).
// Two `serve` processes behind HAProxy on one PostgreSQL; the real 30 s lease.

const EVENTS = 300_000;
const T0 = Date.UTC(2024, 0, 1);

describePostgres('an export task on several instances', () => {
  let cluster: Cluster;
  let db: pg.Client;

  beforeAll(async () => {
    cluster = await startCluster();
    db = new pg.Client({ connectionString: cluster.database });
    await db.connect();
    // Enough rows that the export is still being written when its instance is killed.
    await db.query(
      `INSERT INTO events (id, customer_id, class, type, created, scan_code, gateway_id)
       SELECT 'e-' || lpad(n::text, 7, '0'), 'acme', 'event', 'scan', $1::bigint + n, 'CODE-' || n, 'gw-bulk'
       FROM generate_series(1, $2::int) AS n`,
      [T0, EVENTS],
    );
  }, 120_000);
  afterAll(async () => {
    await db?.end();
    await cluster?.close();
  });

  it('is taken over and completed by the survivor when the instance running it is killed', async () => {
    const [victim, survivor] = cluster.instances;
    const login = await call(victim!.url, 'POST', '/auth/login', { json: { email: CLUSTER_ADMIN_EMAIL, password: CLUSTER_ADMIN_PASSWORD } });
    const token = (login.body as { id_token: string }).id_token;
    // Requested on the victim itself: its exporter claims it at once (the other polls every 2 s).
    const requested = await call(victim!.url, 'POST', `/acme/events/export/tasks?start_time_millis=${T0}`, { token });
    expect(requested.status).toBe(202);
    const task = (requested.body as { task: string }).task;
    const lease = async () => (await db.query<{ lease_owner: string | null; attempts: number; status: string }>('SELECT lease_owner, attempts, status FROM export_tasks WHERE id = $1', [task])).rows[0]!;
    const claimed = await until(lease, (row) => row.lease_owner !== null, { what: 'the victim to claim the task', timeoutMs: 60_000, everyMs: 10 });
    expect(claimed).toMatchObject({ status: 'PENDING', attempts: 1 });
    const killedAt = Date.now();
    await victim!.kill();

    // Asked of the survivor until it is done.
    const taskState = async () => (await call(survivor!.url, 'GET', `/acme/events/export/tasks/${task}`, { token })).body as { status: string; download_link?: string };
    const state = await until(taskState, (answer) => answer.status !== 'PENDING', { what: 'the survivor to finish the task', timeoutMs: 100_000, everyMs: 250 });
    const tookOver = Date.now() - killedAt;
    expect(state.status).toBe('SUCCESSFUL');
    const after = await lease();
    expect(after.attempts).toBe(2);
    expect(after.lease_owner).not.toBe(claimed.lease_owner);
    // Not before the victim's lease ended.
    expect(tookOver).toBeGreaterThanOrEqual(EXPORT_LEASE_MS - 2_000);

    const link = new URL(state.download_link!);
    const download = await call(survivor!.url, 'GET', link.pathname + link.search);
    expect(download.status).toBe(200);
    const lines = download.text.trimEnd().split('\n');
    expect(lines).toHaveLength(EVENTS + 1);
    expect(lines[1]!.startsWith('e-0000001,')).toBe(true);
    expect(lines[EVENTS]!.startsWith(`e-${String(EVENTS).padStart(7, '0')},`)).toBe(true);
    console.info(`cluster-export: ${EVENTS} rows, instance killed mid-export, finished by the other ${tookOver} ms after the kill`);
  }, 120_000);
});
