import { createPrivateKey } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import mqtt from 'mqtt';
import pg from 'pg';
import { extract as extractTar } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/client/api.js';
import { openGatewayKey } from '../../src/pki/sealed-key.js';
import { runCli } from '../helpers/cli.js';
import { opensslDeviceKey } from '../helpers/device-key.js';
import { call } from '../helpers/http.js';
import { filesHoldingPrivateKeys, keyTracesIn, type KnownKey } from '../helpers/key-traces.js';
import { openPkcs12 } from '../helpers/pkcs12.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';
import { selectRows } from '../helpers/store-rows.js';
import { freshDatabase, TEST_DATABASE_URL } from '../helpers/postgres.js';
import { TEST_MASTER_KEY, TEST_STORE } from '../helpers/test-store.js';

// No gateway private key at rest (docs/gateways.md "No gateway key at rest"): three gateways, one
// prepared and redeemed with the key the service made, one through a provisioning package and
// redeemed with a certificate request (its key never leaves the "device"), one prepared,
// re-provisioned and left to expire. After each step nothing of any of their keys is in the
// database (SQLite: the file and its WAL; PostgreSQL: every table's rows), in the data directory
// but for the deployment's own pki/ca.key and pki/server.key, in a fresh `operator backup`, or in
// `operator migrate`'s copy.

const DAY = 24 * 60 * 60 * 1000;
let t: TestServer;
let root: string;
let offset = 0;
/** Every gateway key the test came to know (opened with the token, as one holding a copy of the database and the token could). */
const keys: KnownKey[] = [];
const gateways: Record<'service' | 'device' | 'expiring', { id: string; token: string }> = {} as never;

beforeAll(async () => {
  t = await startTestServer({ clock: () => Date.now() + offset });
  root = mkdtempSync(join(tmpdir(), 'scanhub-keys-at-rest-'));
});
afterAll(async () => {
  await t.close();
  rmSync(root, { recursive: true, force: true });
});

const createGateway = async (name: string) => (await t.admin.post<{ id: string }>(`/${CUSTOMER}/gateways`, { name, usecase: 'picking', station: 'dock' })).id;
const tokenOf = async (id: string, call: 'prepare-provisioning' | 'reprovision') => (await t.admin.post<{ token: string }>(`/${CUSTOMER}/gateways/${id}/${call}`)).token;

/** The key of the gateway's pending certificate, opened with its token. */
async function pendingKey(name: string, gateway: { id: string; token: string }): Promise<KnownKey> {
  const rows = (await selectRows(t, 'SELECT serial, sealed_key FROM gateway_certificates WHERE gateway_id = ? AND sealed_key IS NOT NULL', gateway.id)) as { serial: string; sealed_key: Buffer }[];
  expect(rows).toHaveLength(1);
  const der = openGatewayKey(rows[0]!.sealed_key, gateway.token, rows[0]!.serial);
  return { name, keyPem: createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).export({ type: 'pkcs8', format: 'pem' }) as string };
}

/** The database as stored: SQLite's file and WAL; PostgreSQL's rows of every table, as text. */
async function storedDatabase(): Promise<Buffer> {
  if (TEST_STORE === 'sqlite') {
    const file = join(t.dataDir, 'scanhub.db');
    return Buffer.concat([file, `${file}-wal`].filter((path) => existsSync(path)).map((path) => readFileSync(path)));
  }
  const tables = await selectRows(t, "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename");
  const texts: string[] = [];
  for (const { tablename } of tables) texts.push(...(await selectRows(t, `SELECT t::text AS row FROM "${String(tablename)}" t`)).map((row) => String(row.row)));
  return Buffer.from(texts.join('\n'));
}

/** The deployment's own keys, the only private keys its data directory may hold (PostgreSQL keeps the CA's in the database). */
const DEPLOYMENT_KEYS = TEST_STORE === 'sqlite' ? ['pki/ca.key', 'pki/server.key'] : ['pki/server.key'];

/** A fresh `scanhub operator backup`, unpacked: its folder. */
async function freshBackup(step: string): Promise<string> {
  const file = join(root, `${step}.tar`);
  const backup = await runCli(['operator', '--data-dir', t.dataDir, 'backup', '--output', file]);
  expect({ code: backup.code, stderr: backup.stderr }).toMatchObject({ code: 0 });
  const dir = mkdtempSync(join(root, `${step}-`));
  await extractTar({ file, cwd: dir });
  return dir;
}

/** Nothing of any known key anywhere at rest: the database, the data directory, a fresh backup (SQLite). */
async function expectNoKeyAtRest(step: string): Promise<void> {
  expect({ step, database: keyTracesIn(await storedDatabase(), keys) }).toEqual({ step, database: [] });
  expect({ step, files: filesHoldingPrivateKeys(t.dataDir) }).toEqual({ step, files: DEPLOYMENT_KEYS });
  if (TEST_STORE !== 'sqlite') return;
  const backup = await freshBackup(step);
  expect({ step, backup: filesHoldingPrivateKeys(backup) }).toEqual({ step, backup: DEPLOYMENT_KEYS });
  expect({ step, backupDatabase: keyTracesIn(readFileSync(join(backup, 'scanhub.db')), keys) }).toEqual({ step, backupDatabase: [] });
  // Not even sealed: a backup may hold a package's token, which opens one.
  const copy = new Database(join(backup, 'scanhub.db'), { readonly: true });
  try {
    expect({ step, sealed: copy.prepare('SELECT count(*) FROM gateway_certificates WHERE sealed_key IS NOT NULL').pluck().get() }).toEqual({ step, sealed: 0 });
  } finally {
    copy.close();
  }
}

describe.sequential('gateway keys at rest', () => {
  it('after preparation (prepare-provisioning, a provisioning package, reprovision): sealed only', async () => {
    const service = await createGateway('at-rest-service');
    gateways.service = { id: service, token: await tokenOf(service, 'prepare-provisioning') };
    const made = await t.admin.post<{ gateways: { gateway_id: string; package_url: string }[] }>(`/${CUSTOMER}/create-provisioning-package`, { gateways: [{ gateway_name: 'at-rest-device' }] });
    const document = (await call(made.gateways[0]!.package_url, 'GET', '')).body as { token: string };
    gateways.device = { id: made.gateways[0]!.gateway_id, token: document.token };
    const expiring = await createGateway('at-rest-expiring');
    const first = { id: expiring, token: await tokenOf(expiring, 'prepare-provisioning') };
    keys.push(await pendingKey('expiring, first', first));
    gateways.expiring = { id: expiring, token: await tokenOf(expiring, 'reprovision') };
    keys.push(await pendingKey('service, pending', gateways.service), await pendingKey('device, pending', gateways.device), await pendingKey('expiring', gateways.expiring));
    await expectNoKeyAtRest('prepared');
  });

  it('after redemption, with the service key and with a certificate request', async () => {
    const service = await call(t.url, 'POST', '/provisioning', { json: { token: gateways.service.token } });
    expect(service.status).toBe(200);
    keys.push({ name: 'service, redeemed', keyPem: openPkcs12(Buffer.from((service.body as { pkcs12: string }).pkcs12, 'base64')).keyPem });
    const device = opensslDeviceKey(root, 'ec-p256');
    keys.push({ name: 'device, its own', keyPem: device.keyPem });
    expect((await call(t.url, 'POST', '/provisioning', { json: { token: gateways.device.token, csr: device.csrPem } })).status).toBe(200);
    await expectNoKeyAtRest('redeemed');
  });

  // `operator migrate` copies a stopped SQLite deployment: here a copy of this one's files.
  if (TEST_STORE === 'sqlite' && TEST_DATABASE_URL) it("in operator migrate's copy in PostgreSQL: the sealed key of the pending token only", async () => {
    const copy = mkdtempSync(join(root, 'stopped-'));
    const live = new Database(join(t.dataDir, 'scanhub.db'), { readonly: true });
    await live.backup(join(copy, 'scanhub.db'));
    live.close();
    for (const folder of ['keys', 'pki']) cpSync(join(t.dataDir, folder), join(copy, folder), { recursive: true });
    const database = await freshDatabase();
    const migrated = await runCli(['operator', 'migrate', '--data-dir', copy, '--database', database], { env: { SCANHUB_MASTER_KEY: TEST_MASTER_KEY } });
    expect(migrated).toMatchObject({ code: 0, stderr: expect.stringContaining('counts verified') });
    const client = new pg.Client({ connectionString: database });
    await client.connect();
    try {
      const tables = (await client.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).rows;
      const rows: string[] = [];
      for (const { tablename } of tables) rows.push(...(await client.query<{ row: string }>(`SELECT t::text AS row FROM "${tablename}" t`)).rows.map((row) => row.row));
      expect(keyTracesIn(Buffer.from(rows.join('\n')), keys)).toEqual([]);
      expect((await client.query('SELECT count(sealed_key)::int AS sealed FROM gateway_certificates')).rows).toEqual([{ sealed: 1 }]);
    } finally {
      await client.end();
    }
  });

  it('after its token expired unused: the sealed key erased, the certificate pending and refused at CONNECT, the token refused', async () => {
    offset = DAY + 1;
    const pass = await t.server.ctx.retention.run();
    expect(pass).toMatchObject({ ran: true, erasedKeys: 1 });
    expect(await selectRows(t, 'SELECT count(*) AS n FROM gateway_certificates WHERE sealed_key IS NOT NULL')).toEqual([{ n: 0 }]);
    await expectNoKeyAtRest('expired');

    // A day on, the administrator's IdToken of the start has expired.
    const admin = new ApiClient(t.url, await t.login(ADMIN_EMAIL, ADMIN_PASSWORD));
    const current = await admin.get<{ serial: string; status: string }>(`/${CUSTOMER}/gateways/${gateways.expiring.id}/certificate`);
    expect(current.status).toBe('pending');
    const [row] = await selectRows(t, 'SELECT cert_pem FROM gateway_certificates WHERE serial = ?', current.serial);
    // Whoever kept the key (a copy of the database from before, and the token) cannot connect with it.
    const options = { key: keys.find((key) => key.name === 'expiring')!.keyPem, cert: row!.cert_pem as string, ca: t.server.ctx.ca.certPem, protocolVersion: 4 as const, reconnectPeriod: 0, connectTimeout: 5000 };
    await expect(mqtt.connectAsync(`mqtts://localhost:${t.server.mqttPort}`, options)).rejects.toMatchObject({ code: 5 });
    expect((await call(t.url, 'POST', '/provisioning', { json: { token: gateways.expiring.token } })).status).toBe(403);
  });
});
