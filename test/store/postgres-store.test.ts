import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Outcome, type IngestMessage } from '../../src/domain/ingest.js';
import { GatewayNameTaken, PreparationRefused, type NewUser, type Preparation, type Store } from '../../src/store/ports/index.js';
import { migrations } from '../../src/store/postgres/migrations/index.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';

const KEY = new Uint8Array(32).fill(7);
const CUSTOMER = 'acme';
const T0 = Date.UTC(2024, 0, 1);

function admin(email: string, id: string = randomUUID()): NewUser {
  return { id, customer_id: CUSTOMER, email, roles: ['ADMIN_ROLE'], created: T0 };
}

function message(gatewayId: string, body: unknown, receivedAt = T0 + 1000, quarantine?: IngestMessage['quarantine']): IngestMessage {
  return { gatewayId, receivedAt, payload: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)), ...(quarantine ? { quarantine } : {}) };
}

function preparation(gatewayId: string, serial: string): Preparation {
  return {
    gatewayId,
    certificate: { serial, commonName: gatewayId, certPem: `cert ${serial}`, sealedKey: Buffer.from(`sealed ${serial}`), notAfter: T0 + 1e9 },
    tokenHash: `hash-${serial}`,
    expiresAt: T0 + 1e6,
  };
}

describePostgres('PostgreSQL store', () => {
  let url: string;
  let store: Store;

  beforeAll(async () => {
    url = await freshDatabase();
    store = await openPostgresStore({ kind: 'postgres', url, masterKey: KEY }, 'server');
    expect(await store.customers.bootstrap(CUSTOMER, admin('Admin@Example.com', 'u-admin'), T0)).toBe(true);
  });
  afterAll(() => store?.close());

  it('migrates once however many processes open together, and again finds nothing to do', async () => {
    const other = await freshDatabase();
    const stores = await Promise.all([1, 2, 3].map(() => openPostgresStore({ kind: 'postgres', url: other, masterKey: KEY }, 'reader')));
    await Promise.all(stores.map((s) => s.close()));
    const again = await openPostgresStore({ kind: 'postgres', url: other, masterKey: KEY }, 'reader');
    expect(await again.customers.count()).toBe(0);
    await again.close();
    const pg = await import('pg');
    const client = new pg.default.Client({ connectionString: other });
    await client.connect();
    const { rows } = await client.query('SELECT name FROM schema_migrations ORDER BY name');
    await client.end();
    expect(rows.map((row) => row.name)).toEqual(migrations.map((m) => m.name));
    expect(rows.slice(0, 4)).toEqual([{ name: '0001_foundation' }, { name: '0002_export_leases' }, { name: '0003_login_failures' }, { name: '0004_audit_log' }]);
  });

  it('customers: bootstrap once, createWithAdmin refuses a taken id or e-mail and stores nothing', async () => {
    expect(await store.customers.bootstrap('other', admin('x@example.com'), T0)).toBe(false);
    expect(await store.customers.createWithAdmin(CUSTOMER, admin('y@example.com'), T0)).toBe('customer-exists');
    expect(await store.customers.createWithAdmin('beta', { ...admin('ADMIN@example.COM'), customer_id: 'beta' }, T0)).toBe('email-taken');
    expect(await store.customers.exists('beta')).toBe(false);
    expect(await store.customers.createWithAdmin('gamma', { ...admin('g@example.com'), customer_id: 'gamma' }, T0)).toBe('created');
    expect(await store.customers.count()).toBe(2);
  });

  it('users: case-insensitive e-mails, pages, last admin kept, invitations redeemed once', async () => {
    expect(await store.users.create({ id: 'u-1', customer_id: CUSTOMER, email: 'admin@EXAMPLE.com', roles: [], created: T0 })).toBe(false);
    expect(await store.users.create({ id: 'u-2', customer_id: CUSTOMER, email: 'Bob@example.com', roles: ['USER_ROLE'], created: T0 + 1 })).toBe(true);
    expect((await store.users.byEmail('BOB@EXAMPLE.COM'))?.id).toBe('u-2');
    const bob = await store.users.byId('u-2');
    expect(bob).toEqual({
      id: 'u-2', customer_id: CUSTOMER, email: 'Bob@example.com', first_name: null, last_name: null, language: null,
      roles: ['USER_ROLE'], password_hash: null, consent_general_terms: null, consent_privacy_policy: null, created: T0 + 1, last_updated: T0 + 1,
      session_version: 0,
    });
    expect((await store.users.page(CUSTOMER, null, 10)).map((u) => u.id)).toEqual(['u-admin', 'u-2']);
    expect((await store.users.page(CUSTOMER, { created: T0, id: 'u-admin' }, 10)).map((u) => u.id)).toEqual(['u-2']);
    expect(await store.users.delete(CUSTOMER, 'u-admin')).toBe('last-admin');
    expect(await store.users.delete(CUSTOMER, 'nobody')).toBe('missing');
    expect(await store.users.issueInvitation({ tokenHash: 'tok', userId: 'u-2', customerId: CUSTOMER, kind: 'invitation', created: T0, expiresAt: T0 + 1000 })).toBe('issued');
    const redemptions = await Promise.all([1, 2, 3].map(() => store.users.redeemInvitation('tok', 'hash', T0 + 10)));
    expect(redemptions.filter((r) => r === 'u-2')).toHaveLength(1);
    expect((await store.users.byId('u-2'))?.password_hash).toBe('hash');
    expect(await store.users.delete(CUSTOMER, 'u-2')).toBe('deleted');
  });

  it('features: set, keep or clear properties', async () => {
    expect(await store.features.set(CUSTOMER, 'b', true, { x: 1 }, T0)).toEqual({ feature: 'b', enabled: true, additional_properties: { x: 1 } });
    expect(await store.features.set(CUSTOMER, 'b', false, undefined, T0)).toEqual({ feature: 'b', enabled: false, additional_properties: { x: 1 } });
    await store.features.set(CUSTOMER, 'a', true, null, T0);
    expect(await store.features.list(CUSTOMER)).toEqual([
      { feature: 'a', enabled: true },
      { feature: 'b', enabled: false, additional_properties: { x: 1 } },
    ]);
  });

  it('gateways: names unique among live gateways, versions, soft delete, thing names', async () => {
    const [a] = await store.gateways.createAll(CUSTOMER, [{ id: 'GW-A', name: 'A', usecase: 'u', station: 's' }], T0);
    expect(a).toMatchObject({ id: 'gw-a', name: 'A', type: 'stationary', version: 1, deleted: null, last_message: null, created: T0 });
    await expect(store.gateways.createAll(CUSTOMER, [{ id: 'gw-x', name: 'X', usecase: 'u', station: 's' }, { id: 'gw-y', name: 'A', usecase: 'u', station: 's' }], T0))
      .rejects.toEqual(new GatewayNameTaken(['A']));
    await expect(store.gateways.createAll(CUSTOMER, [{ id: 'gw-x', name: 'X', usecase: 'u', station: 's' }, { id: 'gw-y', name: 'X', usecase: 'u', station: 's' }], T0))
      .rejects.toEqual(new GatewayNameTaken(['X']));
    expect(await store.gateways.byId(CUSTOMER, 'gw-x')).toBeUndefined();
    await store.gateways.createAll(CUSTOMER, [{ id: 'gw-b', name: 'B', usecase: 'u', station: 's' }], T0 + 1);
    expect(await store.gateways.takenNames(CUSTOMER, ['B', 'Q', 'A'])).toEqual(['B', 'A']);
    expect(await store.gateways.update(CUSTOMER, 'gw-b', { name: 'A' }, undefined, T0 + 2)).toBe('name-taken');
    expect(await store.gateways.update(CUSTOMER, 'gw-b', { station: 't' }, [5], T0 + 2)).toBe('stale');
    expect(await store.gateways.update(CUSTOMER, 'gw-b', { station: 't' }, [1], T0 + 2)).toMatchObject({ station: 't', version: 2, last_updated: T0 + 2 });
    expect(await store.gateways.update(CUSTOMER, 'nope', {}, undefined, T0)).toBe('missing');
    expect((await store.gateways.page(CUSTOMER, null, 10)).map((g) => g.id)).toEqual(['gw-a', 'gw-b']);
    expect(await store.gateways.markDeleted(CUSTOMER, 'GW-B', T0 + 3)).toBe(true);
    expect(await store.gateways.markDeleted(CUSTOMER, 'gw-b', T0 + 3)).toBe(false);
    expect(await store.gateways.byId(CUSTOMER, 'gw-b')).toBeUndefined();
    expect(await store.gateways.byThingName('GW-B')).toMatchObject({ id: 'gw-b', deleted: T0 + 3, version: 3 });
    // The name of a deleted gateway is free again.
    await store.gateways.createAll(CUSTOMER, [{ id: 'gw-b2', name: 'B', usecase: 'u', station: 's' }], T0 + 4);
  });

  it('provisioning: prepare once, redeem once under concurrency, a package all or nothing', async () => {
    expect(await store.provisioning.prepare(CUSTOMER, preparation('gw-a', 'aa01'), T0)).toBe('prepared');
    expect(await store.provisioning.prepare(CUSTOMER, preparation('gw-a', 'aa02'), T0)).toBe('already-prepared');
    expect(await store.provisioning.prepare(CUSTOMER, preparation('gw-none', 'aa03'), T0)).toBe('missing');
    const outcomes = await Promise.all([1, 2, 3, 4].map(() => store.provisioning.redeem('hash-aa01', T0 + 5, undefined)));
    const won = outcomes.filter((o) => typeof o === 'object');
    expect(won).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'invalid')).toHaveLength(3);
    expect(won[0]).toMatchObject({ gateway: { id: 'gw-a' }, certificate: { serial: 'aa01', sealedKey: Buffer.from('sealed aa01'), notAfter: T0 + 1e9 } });

    const fresh = [{ id: 'gw-p1', name: 'P1', usecase: 'u', station: 's' }];
    await expect(store.provisioning.preparePackage(CUSTOMER, fresh, [preparation('gw-p1', 'bb01'), preparation('gw-a', 'bb02')], T0))
      .rejects.toEqual(new PreparationRefused('gw-a', 'already-prepared'));
    expect(await store.gateways.byId(CUSTOMER, 'gw-p1')).toBeUndefined();
    await expect(store.provisioning.preparePackage(CUSTOMER, [{ ...fresh[0]!, name: 'A' }], [], T0)).rejects.toBeInstanceOf(GatewayNameTaken);
    await store.provisioning.preparePackage(CUSTOMER, fresh, [preparation('gw-p1', 'bb01')], T0);
    expect((await store.gateways.byId(CUSTOMER, 'gw-p1'))?.provisioning_prepared).toBe(T0);
    await store.gateways.markDeleted(CUSTOMER, 'gw-p1', T0 + 6);
    expect(await store.provisioning.redeem('hash-bb01', T0 + 7, undefined)).toBe('gateway-gone');
  });

  it('ingest: events stored once, deleted gateways, invalid messages, dead letters, reports bump the version only on change', async () => {
    await store.gateways.createAll(CUSTOMER, [{ id: 'gw-i', name: 'I', usecase: 'line', station: 'st1' }, { id: 'gw-d', name: 'D', usecase: 'u', station: 's' }], T0);
    await store.gateways.markDeleted(CUSTOMER, 'gw-d', T0);
    const id1 = randomUUID();
    const id2 = randomUUID();
    const batch = [
      message('gw-i', [{ id: id1, type: 'scan', scan_code: 'A1', created: T0 + 10, scan_duration: 0.25 }, { id: id2, type: 'telemetry', device_battery: 80 }], T0 + 2000),
      message('gw-i', { id: id1, type: 'scan', scan_code: 'A1', created: T0 + 10 }, T0 + 1500),
      message('gw-d', { type: 'scan', scan_code: 'Z' }),
      message('gw-i', { type: 'nonsense' }),
      message('gw-i', { class: 'gateway', model: 'M1', firmware: '1.0' }),
      message('gw-i', { class: 'gateway', model: 'M1' }),
      message('gw-unknown', 'not json', T0, { reason: 'crashed the writer', at: T0 + 5 }),
    ];
    const result = await store.ingest.commit(batch);
    expect(result.outcomes).toEqual([Outcome.STORED, Outcome.STORED, Outcome.GATEWAY_GONE, Outcome.INVALID, Outcome.STORED, Outcome.STORED, Outcome.QUARANTINED]);
    expect({ events: result.events, duplicates: result.duplicates, reports: result.reports }).toEqual({ events: 2, duplicates: 1, reports: 1 });
    const gateway = await store.gateways.byId(CUSTOMER, 'gw-i');
    expect(gateway).toMatchObject({ last_message: T0 + 2000, model: 'M1', firmware: '1.0', version: 2 });
    const rows = await store.events.oldestAfter(CUSTOMER, { created: 0, id: '' }, T0 + 1e7, 10);
    expect(rows).toEqual([
      [id1, 'event', 'scan', T0 + 10, 'A1', 0.25, null, null, null, null, null, 'gw-i', 'line', 'st1', null],
      [id2, 'event', 'telemetry', T0 + 2000, null, null, null, null, 80, null, null, 'gw-i', 'line', 'st1', null],
    ]);
    const letters = await store.deadLetters.list();
    expect(letters).toEqual([{ seq: Number(result.reasons[6]), gateway_id: 'gw-unknown', customer_id: null, received: T0, quarantined: T0 + 5, reason: 'crashed the writer', payload_bytes: 8 }]);
    expect((await store.deadLetters.payload(letters[0]!.seq))?.toString()).toBe('not json');
    expect(await store.deadLetters.payload(999)).toBeUndefined();
  });

  it('ingest: a message PostgreSQL refuses alone is INVALID and its neighbours are stored', async () => {
    const good = randomUUID();
    const result = await store.ingest.commit([
      message('gw-i', { id: good, type: 'scan', scan_code: 'ok' }),
      // PostgreSQL text cannot hold U+0000: the database refuses this message's data.
      message('gw-i', { type: 'scan', scan_code: 'bad\u0000code' }),
    ]);
    expect(result.outcomes).toEqual([Outcome.STORED, Outcome.INVALID]);
    expect(result.reasons[1]).toMatch(/^could not be stored: /);
    expect(result.events).toBe(1);
  });

  it('events: insert, pages newest first with more and last, gateway filter', async () => {
    const rows = [3, 1, 2].map((n) => ({
      id: `00000000-0000-4000-8000-00000000000${n}`, class: 'event', type: 'scan', created: T0 + 100_000, scan_code: `c${n}`,
      scan_duration: null, scan_decode_symbology: null, device_id: null, device_battery: null, device_firmware: null,
      device_temperature: null, gateway_id: n === 2 ? 'gw-z' : 'gw-y', gateway_usecase: null, gateway_station: null, metrics_worker_steps: null,
    }));
    expect(await store.events.insert('evt', rows)).toBe(3);
    expect(await store.events.insert('evt', rows)).toBe(0);
    const page = await store.events.newestBefore('evt', 0, { created: T0 + 1e9, id: '' }, 2, '{"items":[');
    expect(page.count).toBe(2);
    expect(page.more).toBe(true);
    expect(page.last).toEqual({ created: T0 + 100_000, id: rows[2]!.id });
    expect(page.json.toString()).toBe(
      `{"items":[{"id":"${rows[0]!.id}","class":"event","type":"scan","created":${T0 + 100_000},"scan_code":"c3","gateway_id":"gw-y"},` +
        `{"id":"${rows[2]!.id}","class":"event","type":"scan","created":${T0 + 100_000},"scan_code":"c2","gateway_id":"gw-z"}`,
    );
    const next = await store.events.newestBefore('evt', 0, page.last!, 2);
    expect({ count: next.count, more: next.more, last: next.last }).toEqual({ count: 1, more: false, last: { created: T0 + 100_000, id: rows[1]!.id } });
    const byGateway = await store.events.gatewayNewestBefore('evt', 'gw-y', 0, { created: T0 + 1e9, id: '' }, 10);
    expect(byGateway.count).toBe(2);
    expect(await store.events.gatewayNewestBefore('acme', 'gw-y', 0, { created: T0 + 1e9, id: '' }, 10)).toMatchObject({ count: 0, more: false });
    expect((await store.events.newestBefore('nobody', 0, { created: T0 + 1e9, id: '' }, 10, 'P')).json.toString()).toBe('P');
  });

  it('export tasks: create, claim, succeed, fail, expired, deleted, kept files (leases: test/store/export-leases.test.ts)', async () => {
    const task = { id: 't1', customer_id: CUSTOMER, requested_by: 'u', start_time: 1, end_time: 2, cells: 'safe' as const, requested: T0 };
    expect(await store.exportTasks.create(task)).toEqual({ ...task, status: 'PENDING', completed: null, rows: null, file: null, failure: null });
    await store.exportTasks.create({ ...task, id: 't2' });
    await store.exportTasks.create({ ...task, id: 't3' });
    expect(await store.exportTasks.claim('me', 0, 1000)).toEqual({ ...task, status: 'PENDING', completed: null, rows: null, file: null, failure: null, attempts: 1 });
    expect((await store.exportTasks.claim('me', 0, 1000))?.id).toBe('t2');
    expect(await store.exportTasks.succeed('t1', 'me', T0 + 1, 42, 'exports/t1.csv')).toBe(true);
    expect(await store.exportTasks.fail('t2', 'me', T0 + 2, 'boom')).toBe(true);
    expect(await store.exportTasks.byId(CUSTOMER, 't1')).toMatchObject({ status: 'SUCCESSFUL', rows: 42, file: 'exports/t1.csv', completed: T0 + 1 });
    expect(await store.exportTasks.byId(CUSTOMER, 't2')).toMatchObject({ status: 'FAILED', failure: 'boom', completed: T0 + 2 });
    expect(await store.exportTasks.byId(CUSTOMER, 't3')).toMatchObject({ status: 'PENDING' });
    expect(await store.exportTasks.byId('gamma', 't1')).toBeUndefined();
    expect(await store.exportTasks.keptFiles()).toEqual(new Set(['exports/t1.csv']));
    expect(await store.exportTasks.expiredBy(T0)).toEqual([]);
    expect(await store.exportTasks.expiredBy(T0 + 1)).toEqual([{ id: 't1', file: 'exports/t1.csv' }]);
    // FAILED tasks expire too (without a file); a PENDING one never does.
    expect(await store.exportTasks.expiredBy(T0 + 1e9)).toEqual([
      { id: 't1', file: 'exports/t1.csv' },
      { id: 't2', file: null },
    ]);
    await store.exportTasks.delete('t1');
    await store.exportTasks.delete('t3');
    expect(await store.exportTasks.byId(CUSTOMER, 't1')).toBeUndefined();
    expect(await store.exportTasks.byId(CUSTOMER, 't3')).toMatchObject({ status: 'PENDING' });
    expect(await store.exportTasks.keptFiles()).toEqual(new Set());
  });

  it('job configurations: revision per customer, refusals, one snapshot', async () => {
    expect(await store.jobConfigs.list('gamma')).toEqual({ revision: 0, items: [] });
    const fields = { job_name: 'J', start_barcode: 'S', end_barcode: 'E', gateway_ids: ['gw-a'] };
    const created = await store.jobConfigs.create(CUSTOMER, 'j1', fields, T0);
    expect(created).toEqual({ job_config_id: 'j1', ...fields, created: T0, last_updated: T0, class: 'jobconfig', version: 1 });
    expect(await store.jobConfigs.create(CUSTOMER, 'j2', fields, T0)).toEqual({ refused: 'name-taken' });
    expect(await store.jobConfigs.create(CUSTOMER, 'j2', { ...fields, job_name: 'K', gateway_ids: ['gw-a', 'gw-nope', 'gw-b'] }, T0)).toEqual({
      refused: 'unknown-gateway', gateway_id: 'gw-nope',
    });
    expect(await store.jobConfigs.update(CUSTOMER, 'j1', { job_name: 'J2' }, T0 + 1, 7)).toEqual({ refused: 'stale', version: 1 });
    expect(await store.jobConfigs.update(CUSTOMER, 'jx', {}, T0 + 1)).toEqual({ refused: 'missing' });
    expect(await store.jobConfigs.update(CUSTOMER, 'j1', { job_name: 'J2' }, T0 + 1, 1)).toMatchObject({ job_name: 'J2', version: 2, last_updated: T0 + 1 });
    const racing = await Promise.all([1, 2, 3].map((n) => store.jobConfigs.create(CUSTOMER, `r${n}`, { ...fields, job_name: 'same' }, T0 + 2)));
    expect(racing.filter((r) => 'refused' in r)).toEqual([{ refused: 'name-taken' }, { refused: 'name-taken' }]);
    expect(await store.jobConfigs.delete(CUSTOMER, 'j1')).toBe(true);
    expect(await store.jobConfigs.delete(CUSTOMER, 'j1')).toBe(false);
    const list = await store.jobConfigs.list(CUSTOMER);
    expect(list.revision).toBe(4);
    expect(list.items.map((j) => j.job_name)).toEqual(['same']);
    expect(await store.jobConfigs.byId(CUSTOMER, list.items[0]!.job_config_id)).toEqual(list.items[0]);
  });

  it('job analysis: markers per gateway in (created, id) order, long codes included', async () => {
    const long = `S${'7'.repeat(8191)}`;
    const at = (n: number) => T0 + 200_000 + n;
    const id = (n: number) => `10000000-0000-4000-8000-00000000000${n}`;
    const base = { class: 'event', scan_duration: null, scan_decode_symbology: null, device_id: null, device_battery: null, device_firmware: null,
      device_temperature: null, gateway_usecase: null, gateway_station: null, metrics_worker_steps: null };
    await store.events.insert(CUSTOMER, [
      { ...base, id: id(1), type: 'scan', created: at(1), scan_code: 'S-1', gateway_id: 'gw-j' },
      { ...base, id: id(2), type: 'scan', created: at(2), scan_code: 'x', gateway_id: 'gw-j' },
      { ...base, id: id(3), type: 'scan', created: at(3), scan_code: 'E-1', gateway_id: 'gw-j' },
      { ...base, id: id(4), type: 'scan', created: at(4), scan_code: long, gateway_id: 'gw-j' },
      { ...base, id: id(5), type: 'telemetry', created: at(5), scan_code: 'E', gateway_id: 'gw-j' },
      { ...base, id: id(6), type: 'scan', created: at(6), scan_code: 'e-lower', gateway_id: 'gw-j' },
      { ...base, id: id(7), type: 'scan', created: at(7), scan_code: 'E-2', gateway_id: 'gw-j' },
    ]);
    const request = { gatewayIds: ['gw-j', 'gw-none'], barcodes: { start_barcode: 'S', end_barcode: 'E' }, range: { start_time: at(0), end_time: at(100) } };
    const expected = { results: [
      { gateway_id: 'gw-j', jobs: [
        { start_time: at(1), end_time: at(3), start_event_id: id(1), end_event_id: id(3) },
        { start_time: at(4), end_time: at(7), start_event_id: id(4), end_event_id: id(7) },
      ] },
      { gateway_id: 'gw-none', jobs: [] },
    ] };
    expect(JSON.parse((await store.jobAnalysis.analyze(request)).toString())).toEqual(expected);
    expect((await store.jobAnalysis.analyze(request)).toString()).toBe(JSON.stringify(expected));
  });

  it('assets: the latest registered of a type is its default; agreements', async () => {
    const asset = (version: string, registered: number) => ({
      id: `a-${version}`, asset_type: 'MARK_FIRMWARE' as const, asset_version: version, file_name: 'f.bin', file_size: 5_000_000_000,
      file_sha256: 'ab', eula_version: '1', eula_text: 'text', eula_checksum: 'CD', registered,
    });
    expect(await store.assets.register(asset('2.0', T0))).toBe(true);
    expect(await store.assets.register(asset('1.0', T0 + 1))).toBe(true);
    expect(await store.assets.register(asset('1.0', T0 + 2))).toBe(false);
    expect((await store.assets.list()).map((a) => [a.asset_version, a.default])).toEqual([['1.0', true], ['2.0', false]]);
    expect(await store.assets.find('MARK_FIRMWARE')).toEqual({ ...asset('1.0', T0 + 1), default: true });
    expect((await store.assets.find('MARK_FIRMWARE', '2.0'))?.default).toBe(false);
    expect(await store.assets.find('MARK_FIRMWARE', '3.0')).toBeUndefined();
    expect(await store.assets.exists('MARK_FIRMWARE', '2.0')).toBe(true);
    const agreement = { agreed_at: T0, customer_id: CUSTOMER, user_id: 'u', agreed_by: 'a@b', asset_id: 'a-2.0', asset_type: 'MARK_FIRMWARE',
      asset_version: '2.0', eula_version: '1', eula_checksum: 'CD' };
    await store.assets.recordAgreement(agreement);
    await store.assets.recordAgreement({ ...agreement, customer_id: 'gamma' });
    expect(await store.assets.agreements(CUSTOMER)).toEqual([agreement]);
    expect(await store.assets.agreements()).toHaveLength(2);
  });

  it('secrets: created once under a race, read back, refused under another master key', async () => {
    let calls = 0;
    const values = await Promise.all([1, 2, 3, 4].map((n) => store.secrets.getOrCreate('keys/links.key', () => `value-${n}-${++calls}`)));
    expect(new Set(values).size).toBe(1);
    expect(await store.secrets.get('keys/links.key')).toBe(values[0]);
    expect(await store.secrets.get('pki/ca.key')).toBeUndefined();
    const other = await openPostgresStore({ kind: 'postgres', url, masterKey: new Uint8Array(32).fill(8) }, 'reader');
    try {
      await expect(other.secrets.get('keys/links.key')).rejects.toThrow('the master key does not decrypt the secrets stored in this database');
    } finally {
      await other.close();
    }
  });

  it('ping answers while the server is up', async () => {
    await expect(store.ping()).resolves.toBeUndefined();
  });
});
