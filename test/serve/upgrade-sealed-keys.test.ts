import { X509Certificate, createHash, generateKeyPairSync } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { extract as extractTar } from 'tar';
import { afterAll, describe, expect, it } from 'vitest';
import { applyMigrations as applyPostgresMigrations, migrations as postgresMigrations } from '../../src/store/postgres/migrations/index.js';
import { migrations as sqliteMigrations } from '../../src/store/sqlite/migrations/index.js';
import { openDatabase } from '../../src/store/sqlite/open.js';
import { startServer } from '../../src/serve/start.js';
import { runCli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { filesHoldingPrivateKeys, keyTracesIn, type KnownKey } from '../helpers/key-traces.js';
import { openPkcs12 } from '../helpers/pkcs12.js';
import { freshDatabase } from '../helpers/postgres.js';
import { testServeOptions } from '../helpers/server.js';
import { TEST_STORE } from '../helpers/test-store.js';

// A database of a version before sealed keys (docs/gateways.md "No gateway key at rest"): keys of
// pending certificates in clear in gateway_certificates.key_pem, and, of redeemed ones, whatever
// setting key_pem to NULL left in the file. The upgrade's migration (SQLite 0017, PostgreSQL 0012)
// must leave nothing of any of them, and keep the certificates and tokens.

const DAY = 24 * 60 * 60 * 1000;
/** Redeemed gateways: rows whose keys the old version set to NULL, leaving their bytes in the free space of the table's pages. */
const REDEEMED = 40;
const NOW = Date.now();
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A gateway of the old version: its certificate's key and token, and what became of them. */
interface Legacy {
  id: string;
  serial: string;
  key: KnownKey;
  token: string;
  state: 'redeemed' | 'pending' | 'expired';
}

/** Gateways as the old version left them: many redeemed (EC and RSA, for the churn of their pages), one pending, one expired. */
function legacyGateways(): Legacy[] {
  const states: Legacy['state'][] = [...Array<Legacy['state']>(REDEEMED).fill('redeemed'), 'pending', 'expired'];
  return states.map((state, i) => {
    const { privateKey } = i % 8 === 3 ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
    return { id, serial: `5e${String(i).padStart(4, '0')}`, key: { name: `${state} ${i}`, keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string }, token: `legacy-token-${i}`, state };
  });
}

/** The rows the old version wrote, through `run` (`?` placeholders), as it wrote them: the key in clear, NULLed at redemption. */
async function writeLegacyRows(run: (sql: string, ...params: unknown[]) => Promise<void>, gateways: Legacy[]): Promise<void> {
  await run('INSERT INTO customers (id, created) VALUES (?, ?)', 'acme', NOW);
  for (const g of gateways) {
    await run('INSERT INTO gateways (id, customer_id, name, usecase, station, provisioning_prepared, created, last_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', g.id, 'acme', g.key.name, 'u', 's', NOW, NOW, NOW);
    await run(
      'INSERT INTO gateway_certificates (serial, gateway_id, common_name, cert_pem, key_pem, created, not_after) VALUES (?, ?, ?, ?, ?, ?, ?)',
      g.serial, g.id, g.id, `certificate of ${g.id}`, g.key.keyPem, NOW, NOW + 3650 * DAY,
    );
    const expires = g.state === 'expired' ? NOW - 1 : NOW + DAY;
    await run('INSERT INTO provisioning_tokens (token_hash, gateway_id, certificate_serial, created, expires_at) VALUES (?, ?, ?, ?, ?)', createHash('sha256').update(g.token).digest('hex'), g.id, g.serial, NOW, expires);
  }
  for (const g of gateways.filter((g) => g.state === 'redeemed')) {
    await run('UPDATE provisioning_tokens SET used_at = ? WHERE gateway_id = ?', NOW, g.id);
    await run('UPDATE gateway_certificates SET key_pem = NULL, delivered_at = ? WHERE serial = ?', NOW, g.serial);
  }
}

describe(`upgrading a database that holds gateway keys in clear (${TEST_STORE})`, () => {
  // One case per store: each project runs its own (vitest.config.ts), neither is skipped.
  if (TEST_STORE === 'sqlite') it('SQLite 0017 leaves nothing of them in the file or its WAL, keeps certificates and tokens; a pending token then redeems with a fresh key', async () => {
    const gateways = legacyGateways();
    const old = mkdtempSync(join(tmpdir(), 'scanhub-upgrade-keys-'));
    const dataDir = mkdtempSync(join(tmpdir(), 'scanhub-upgrade-keys-data-'));
    const notUpgraded = mkdtempSync(join(tmpdir(), 'scanhub-upgrade-keys-backup-'));
    dirs.push(old, dataDir, notUpgraded);
    const file = join(old, 'scanhub.db');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    db.exec('CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied INTEGER NOT NULL)');
    for (const migration of sqliteMigrations.filter((m) => m.name < '0017')) {
      migration.up(db);
      db.prepare('INSERT INTO schema_migrations (name, applied) VALUES (?, 0)').run(migration.name);
    }
    db.pragma('wal_checkpoint(TRUNCATE)');
    // The old version stopped without a checkpoint: its last transactions, keys included, are in the WAL.
    db.pragma('wal_autocheckpoint = 0');
    await writeLegacyRows(async (sql, ...params) => void db.prepare(sql).run(...params), gateways);
    for (const dir of [dataDir, notUpgraded]) for (const suffix of ['', '-wal']) copyFileSync(`${file}${suffix}`, join(dir, `scanhub.db${suffix}`));
    db.close();
    const stored = () => Buffer.concat(['scanhub.db', 'scanhub.db-wal'].map((name) => join(dataDir, name)).filter(existsSync).map((path) => readFileSync(path)));
    expect(keyTracesIn(stored(), gateways.map((g) => g.key)).length).toBeGreaterThan(gateways.length);

    // A backup of it that this version makes before any serve migrated it holds none of them either.
    const unpacked = mkdtempSync(join(tmpdir(), 'scanhub-upgrade-keys-unpacked-'));
    dirs.push(unpacked);
    const backup = join(unpacked, 'backup.tar');
    expect(await runCli(['operator', '--data-dir', notUpgraded, 'backup', '--output', backup])).toMatchObject({ code: 0, stderr: expect.stringContaining('Backed up') });
    await extractTar({ file: backup, cwd: unpacked }, ['scanhub.db']);
    expect(keyTracesIn(readFileSync(join(unpacked, 'scanhub.db')), gateways.map((g) => g.key))).toEqual([]);

    const upgraded = openDatabase(join(dataDir, 'scanhub.db'));
    try {
      expect(keyTracesIn(stored(), gateways.map((g) => g.key))).toEqual([]);
      expect((upgraded.pragma('table_info(gateway_certificates)') as { name: string }[]).map((c) => c.name)).toEqual([
        'serial', 'gateway_id', 'common_name', 'cert_pem', 'sealed_key', 'created', 'not_after', 'delivered_at', 'revoked', 'replaces',
      ]);
      expect(upgraded.prepare('SELECT count(*) AS certificates, count(sealed_key) AS sealed, count(delivered_at) AS delivered FROM gateway_certificates').get()).toEqual({
        certificates: gateways.length,
        sealed: 0,
        delivered: REDEEMED,
      });
      expect(upgraded.prepare('SELECT count(*) AS tokens, count(used_at) AS used FROM provisioning_tokens').get()).toEqual({ tokens: gateways.length, used: REDEEMED });
      expect(upgraded.pragma('foreign_key_check')).toEqual([]);
      expect(upgraded.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      upgraded.close();
    }
    expect(keyTracesIn(stored(), gateways.map((g) => g.key))).toEqual([]);

    // serve on it: the pending token gets a fresh key and certificate, the expired one nothing.
    mkdirSync(join(dataDir, 'pki'), { recursive: true });
    const server = await startServer(testServeOptions(dataDir, undefined));
    try {
      const pending = gateways.find((g) => g.state === 'pending')!;
      const answer = await call(server.url, 'POST', '/provisioning', { json: { token: pending.token } });
      expect(answer.status).toBe(200);
      const { key, certificates } = openPkcs12(Buffer.from((answer.body as { pkcs12: string }).pkcs12, 'base64'));
      expect({ subject: certificates[0]!.subject, ownKey: certificates[0]!.checkPrivateKey(key), chained: certificates[0]!.verify(new X509Certificate(server.ctx.ca.certPem).publicKey) }).toEqual({
        subject: `CN=${pending.id}`,
        ownKey: true,
        chained: true,
      });
      const expired = gateways.find((g) => g.state === 'expired')!;
      expect((await call(server.url, 'POST', '/provisioning', { json: { token: expired.token } })).status).toBe(403);
    } finally {
      await server.close();
    }
    expect(filesHoldingPrivateKeys(dataDir)).toEqual(['pki/ca.key', 'pki/server.key']);
  }, 60_000);

  else it('PostgreSQL 0012 leaves nothing of them in any table, keeps certificates and tokens', async () => {
    const gateways = legacyGateways();
    const client = new pg.Client({ connectionString: await freshDatabase() });
    await client.connect();
    try {
      await client.query('CREATE TABLE schema_migrations (name text PRIMARY KEY, applied bigint NOT NULL)');
      for (const migration of postgresMigrations.filter((m) => m.name < '0012')) {
        await migration.up(client as pg.PoolClient);
        await client.query('INSERT INTO schema_migrations (name, applied) VALUES ($1, 0)', [migration.name]);
      }
      await writeLegacyRows(async (sql, ...params) => {
        let n = 0;
        await client.query(sql.replace(/\?/g, () => `$${++n}`), params);
      }, gateways);

      expect(await applyPostgresMigrations(client as pg.PoolClient)).toEqual(postgresMigrations.filter((m) => m.name >= '0012').map((m) => m.name));

      const tables = (await client.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).rows.map((row) => row.tablename);
      const contents: string[] = [];
      for (const table of tables) contents.push(...(await client.query<{ row: string }>(`SELECT t::text AS row FROM "${table}" t`)).rows.map((row) => row.row));
      expect(keyTracesIn(Buffer.from(contents.join('\n')), gateways.map((g) => g.key))).toEqual([]);
      const columns = await client.query<{ column_name: string }>("SELECT column_name FROM information_schema.columns WHERE table_name = 'gateway_certificates' ORDER BY ordinal_position");
      expect(columns.rows.map((row) => row.column_name).sort()).toEqual(['cert_pem', 'common_name', 'created', 'delivered_at', 'gateway_id', 'not_after', 'replaces', 'revoked', 'sealed_key', 'serial']);
      const counts = await client.query('SELECT count(*)::int AS certificates, count(sealed_key)::int AS sealed, count(delivered_at)::int AS delivered FROM gateway_certificates');
      expect(counts.rows).toEqual([{ certificates: gateways.length, sealed: 0, delivered: REDEEMED }]);
      const tokens = await client.query('SELECT count(*)::int AS tokens, count(used_at)::int AS used FROM provisioning_tokens');
      expect(tokens.rows).toEqual([{ tokens: gateways.length, used: REDEEMED }]);
    } finally {
      await client.end();
    }
  }, 60_000);
});
