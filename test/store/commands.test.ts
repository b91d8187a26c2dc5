// Commands (docs/commands.md; migrations SQLite 0019 and PostgreSQL 0014), over both stores:
// all-or-none creation with audit entries and a `commands-queued` signal; the claim of a gateway's
// next commands in creation order, skipping canceled, expired and delivered ones and counting
// attempts; PUBACK -> DELIVERED once; responses of the gateway (unknown, foreign, too late);
// cancel; the expiry sweep; the stored subscription of a persistent session. Both stores give the
// same answers (the transcript at the end).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/domain/audit.js';
import { toApiCommand, type CommandRecord } from '../../src/domain/commands.js';
import { UnknownGateways, type NewCommand, type Signal, type Store } from '../../src/store/ports/index.js';
import { UUID_V7, uuidV7Time } from '../helpers/patterns.js';
import { describePostgres } from '../helpers/postgres.js';
import { ownDatabase, runSql, runSqliteSql, type OwnDatabase } from '../helpers/test-store.js';

const T0 = 1_800_000_000_000;
const id = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
const GW_A = 'aaaaaaaa-0000-4000-8000-000000000001';
const GW_B = 'bbbbbbbb-0000-4000-8000-000000000002';
const GW_O = 'cccccccc-0000-4000-8000-000000000003';
const GW_C = 'dddddddd-0000-4000-8000-000000000004';

const command = (n: number, gatewayId = GW_A, ttlMs = 60_000, name = 'feedback'): NewCommand => ({
  id: id(n),
  gateway_id: gatewayId,
  device_id: n % 2 ? 'ring-1' : null,
  name,
  parameters: JSON.stringify({ sequence: 'OK', n }),
  expires_at: T0 + ttlMs,
});

const entry = (n: number, action: AuditEntry['action'] = 'command.created'): AuditEntry => ({
  id: `${action}-${n}`,
  customerId: 'acme',
  time: T0,
  action,
  actor: { type: 'user', id: 'admin-acme' },
  target: { type: 'command', id: id(n) },
});

const transcripts: Record<string, string[]> = {};

function contract(kind: 'sqlite' | 'postgres'): void {
  let database: OwnDatabase;
  let store: Store;
  const signals: Signal[] = [];
  const transcript: string[] = (transcripts[kind] = []);
  const query = (sql: string) => (kind === 'sqlite' ? Promise.resolve(runSqliteSql(database.dataDir, sql)) : runSql((database.locator as { url: string }).url, sql));
  /** The API form at `now`, into the transcript (seq left out: PostgreSQL's identity may skip). */
  const shown = (records: CommandRecord[], now = T0) => {
    const answer = records.map((r) => ({ ...toApiCommand(r, now), attempts: r.attempts }));
    transcript.push(JSON.stringify(answer));
    return answer;
  };
  const names = (records: CommandRecord[]) => records.map((r) => r.id);
  /** One gateway's claim (the store takes several at once). */
  const claim = async (gatewayId: string, exclude: number[], limit: number, now: number) => (await store.commands.claim([{ gateway_id: gatewayId, exclude, limit }], now))[0]!;
  const respond = async (gatewayId: string, commandId: string, status: 'SUCCEEDED' | 'FAILED', details: string | null, now: number) =>
    (await store.commands.respond([{ gateway_id: gatewayId, id: commandId, status, details }], now))[0]!;

  beforeAll(async () => {
    database = await ownDatabase(kind);
    store = await database.open();
    for (const customer of ['acme', 'other']) {
      await store.customers.createWithAdmin(customer, { id: `admin-${customer}`, customer_id: customer, email: `admin@${customer}.example`, roles: ['ADMIN_ROLE'], created: T0 }, T0);
    }
    await store.gateways.createAll('acme', [{ id: GW_A, name: 'A', usecase: 'u', station: 's' }, { id: GW_B, name: 'B', usecase: 'u', station: 's' }], T0);
    await store.gateways.createAll('other', [{ id: GW_O, name: 'O', usecase: 'u', station: 's' }], T0);
    store.signals.subscribe((signal) => signals.push(signal));
    await store.signals.listening();
  });
  afterAll(async () => {
    await database?.close();
  });

  it('creates all the commands with their audit entries and signals their gateways; a missing or foreign gateway stores none', async () => {
    await expect(store.commands.createAll('acme', [command(90), command(91, GW_O)], T0, [entry(90), entry(91)])).rejects.toEqual(new UnknownGateways([GW_O]));
    expect(await store.commands.byId('acme', id(90))).toBeUndefined();
    const created = await store.commands.createAll('acme', [1, 2, 3, 4].map((n) => command(n)).concat(command(5, GW_B)), T0, [1, 2, 3, 4, 5].map((n) => entry(n)));
    expect(shown(created)[0]).toEqual({
      command_id: id(1),
      gateway_id: GW_A,
      device_id: 'ring-1',
      name: 'feedback',
      parameters: { sequence: 'OK', n: 1 },
      status: 'QUEUED',
      created: T0,
      last_updated: T0,
      expires_at: T0 + 60_000,
      attempts: 0,
    });
    expect(names(created)).toEqual([1, 2, 3, 4, 5].map(id));
    const audit = await store.audit.newestBefore('acme', 0, { time: T0 + 1, id: '' }, 100, 'command.created');
    expect(audit.entries.map((e) => e.target?.id).sort()).toEqual([1, 2, 3, 4, 5].map(id));
    await expect.poll(() => signals.filter((s) => s.kind === 'commands-queued')).toEqual([{ kind: 'commands-queued', gateway_ids: [GW_A, GW_B] }]);
  });

  it('claims a gateway\'s QUEUED commands in creation order but those excluded (sent already), counting attempts, skipping canceled ones', async () => {
    expect(await store.commands.cancel('acme', id(2), T0 + 1, entry(2, 'command.canceled'))).toMatchObject({ id: id(2), status: 'CANCELED', last_updated: T0 + 1 });
    const first = await claim(GW_A, [], 2, T0 + 2);
    expect(names(first)).toEqual([id(1), id(3)]);
    expect(first.map((c) => c.attempts)).toEqual([1, 1]);
    const rest = await claim(GW_A, first.map((c) => c.seq), 10, T0 + 2);
    expect(names(rest)).toEqual([id(4)]);
    // From the start again (a new connection): the same ones, a second attempt (sent with DUP).
    expect((await claim(GW_A, [], 10, T0 + 2)).map((c) => [c.id, c.attempts])).toEqual([[id(1), 2], [id(3), 2], [id(4), 2]]);
    // A resend after no PUBACK in time: only those still QUEUED and not expired, one more attempt each.
    expect((await store.commands.reclaim(GW_A, [id(1), id(2), id(5)], T0 + 2)).map((c) => [c.id, c.attempts])).toEqual([[id(1), 3]]);
    expect(await store.commands.reclaim(GW_A, [id(1)], T0 + 60_000)).toEqual([]);
    shown(await store.commands.page('acme', GW_A, null, 10), T0 + 2);
  });

  it('marks acknowledged commands DELIVERED once, with the device as actor; another gateway\'s ids change nothing', async () => {
    expect(await store.commands.delivered([{ gateway_id: GW_B, id: id(1) }], T0 + 3, true)).toEqual([]);
    const delivered = await store.commands.delivered([1, 2, 3].map((n) => ({ gateway_id: GW_A, id: id(n) })), T0 + 3, true);
    expect(delivered.map((c) => [c.id, c.status, c.delivered_at])).toEqual([[id(1), 'DELIVERED', T0 + 3], [id(3), 'DELIVERED', T0 + 3]].sort());
    expect(await store.commands.delivered([{ gateway_id: GW_A, id: id(1) }], T0 + 4, true)).toEqual([]);
    expect(names(await claim(GW_A, [], 10, T0 + 4))).toEqual([id(4)]);
    const entries = await store.audit.newestBefore('acme', 0, { time: T0 + 10, id: '' }, 100, 'command.delivered');
    expect(entries.entries.map((e) => [e.actor, e.target, e.details]).sort((a, b) => String((a[1] as { id: string }).id).localeCompare((b[1] as { id: string }).id))).toEqual(
      [1, 3].map((n) => [{ type: 'device', id: GW_A }, { type: 'command', id: id(n) }, { gateway_id: GW_A, name: 'feedback' }]),
    );
    // Time-ordered ids (domain/command-ids.ts): the entries of a busy hour append to the audit log's key index.
    expect(entries.entries.map((e) => [e.id, uuidV7Time(e.id)])).toEqual([1, 3].map(() => [expect.stringMatching(UUID_V7), T0 + 3]));
  });

  it('takes a response of the gateway once: unknown and foreign ids, and finished commands, are refused', async () => {
    expect(await respond(GW_A, id(77), 'SUCCEEDED', null, T0 + 5)).toBe('unknown');
    expect(await respond(GW_B, id(1), 'SUCCEEDED', null, T0 + 5)).toBe('unknown');
    const done = await respond(GW_A, id(1), 'FAILED', 'no such sequence', T0 + 5);
    expect(done).toMatchObject({ status: 'FAILED', details: 'no such sequence', completed_at: T0 + 5, delivered_at: T0 + 3 });
    expect(await respond(GW_A, id(1), 'SUCCEEDED', null, T0 + 6)).toBe('final');
    expect(await respond(GW_A, id(2), 'SUCCEEDED', null, T0 + 6)).toBe('final');
    // A response before the PUBACK was recorded completes a QUEUED command, delivered then too.
    expect(await respond(GW_A, id(4), 'SUCCEEDED', null, T0 + 7)).toMatchObject({ status: 'SUCCEEDED', delivered_at: T0 + 7, completed_at: T0 + 7 });
    expect(await store.commands.cancel('acme', id(4), T0 + 8)).toMatchObject({ final: { status: 'SUCCEEDED' } });
    expect(await store.commands.cancel('other', id(3), T0 + 8)).toBe('missing');
    shown(await store.commands.page('acme', GW_A, null, 10), T0 + 8);
  });

  it('never claims or completes a command past expires_at; the sweep stores EXPIRED; a cancel then is refused', async () => {
    await store.commands.createAll('acme', [command(6, GW_B, 10), command(7, GW_B, 30)], T0 + 10);
    expect(names(await claim(GW_B, [], 10, T0 + 20))).toEqual([id(5), id(7)]);
    expect(names(await claim(GW_B, [], 10, T0 + 30))).toEqual([id(5)]);
    expect(await respond(GW_B, id(7), 'SUCCEEDED', null, T0 + 30)).toBe('final');
    expect(await store.commands.cancel('acme', id(6), T0 + 30)).toMatchObject({ final: { status: 'EXPIRED', last_updated: T0 + 30 } });
    expect(await store.commands.expire(T0 + 30, 100)).toBe(1);
    expect(await store.commands.expire(T0 + 30, 100)).toBe(0);
    const page = await store.commands.page('acme', GW_B, null, 10);
    expect(page.map((c) => [c.id, c.status])).toEqual([[id(7), 'EXPIRED'], [id(6), 'EXPIRED'], [id(5), 'QUEUED']]);
    shown(page, T0 + 30);
  });

  it('pages a gateway\'s commands newest first by (created, id)', async () => {
    const first = await store.commands.page('acme', GW_A, null, 2);
    expect(names(first)).toEqual([id(4), id(3)]);
    expect(names(await store.commands.page('acme', GW_A, { created: first[1]!.created, id: first[1]!.id }, 10))).toEqual([id(2), id(1)]);
    expect(await store.commands.page('other', GW_A, null, 10)).toEqual([]);
  });

  it('pages by (created, id) whatever order the commands came in: a smaller id in the same millisecond, a clock set back', async () => {
    await store.gateways.createAll('acme', [{ id: GW_C, name: 'C', usecase: 'u', station: 's' }], T0);
    const arrivals: [number[], number][] = [[[40], T0 + 100], [[45], T0 + 200], [[42], T0 + 200], [[41], T0 + 150], [[43, 48, 44], T0 + 200], [[46], T0 + 50], [[47], T0 + 300]];
    for (const [ns, now] of arrivals) await store.commands.createAll('acme', ns.map((n) => command(n, GW_C)), now);
    const first = await store.commands.page('acme', GW_C, null, 3);
    expect(names(first)).toEqual([id(47), id(48), id(45)]);
    const second = await store.commands.page('acme', GW_C, { created: first[2]!.created, id: first[2]!.id }, 4);
    expect(names(second)).toEqual([id(44), id(43), id(42), id(41)]);
    expect(names(await store.commands.page('acme', GW_C, { created: second[3]!.created, id: second[3]!.id }, 10))).toEqual([id(40), id(46)]);
    expect(names(await store.commands.page('acme', GW_C, null, 100))).toEqual([47, 48, 45, 44, 43, 42, 41, 40, 46].map(id));
  });

  it('gives records of the fields of CommandRecord only (none of a store\'s own bookkeeping)', async () => {
    const fields = ['attempts', 'completed_at', 'created', 'customer_id', 'delivered_at', 'details', 'device_id', 'expires_at', 'gateway_id', 'id', 'last_updated', 'name', 'parameters', 'seq', 'status'];
    const [created] = await store.commands.createAll('acme', [command(49, GW_C)], T0 + 400);
    const [claimed] = (await store.commands.claim([{ gateway_id: GW_C, exclude: [], limit: 1 }], T0 + 400))[0]!;
    const [listed] = await store.commands.page('acme', GW_C, null, 1);
    for (const record of [created, claimed, listed, await store.commands.byId('acme', id(49))]) expect(Object.keys(record!).sort()).toEqual(fields);
  });

  it('claims and answers for several gateways in one call, each its own', async () => {
    await store.commands.createAll('acme', [command(8, GW_A), command(9, GW_B)], T0 + 40);
    const claimed = await store.commands.claim([{ gateway_id: GW_B, exclude: [], limit: 1 }, { gateway_id: GW_A, exclude: [], limit: 5 }], T0 + 41);
    expect(claimed.map(names)).toEqual([[id(5)], [id(8)]]);
    const outcomes = await store.commands.respond(
      [
        { gateway_id: GW_A, id: id(8), status: 'SUCCEEDED', details: null },
        { gateway_id: GW_A, id: id(9), status: 'SUCCEEDED', details: null },
        { gateway_id: GW_B, id: id(9), status: 'FAILED', details: 'x' },
      ],
      T0 + 42,
    );
    expect(outcomes.map((o) => (typeof o === 'string' ? o : o.status))).toEqual(['SUCCEEDED', 'unknown', 'FAILED']);
  });

  it('answers the responses of one call in their order, as one after the other: the first for a command wins, a later one finds it final', async () => {
    await store.commands.createAll('acme', [command(10, GW_A), command(11, GW_A)], T0 + 50);
    const outcomes = await store.commands.respond(
      [
        { gateway_id: GW_A, id: id(11).toUpperCase(), status: 'FAILED', details: 'jammed' },
        { gateway_id: GW_A, id: id(10), status: 'SUCCEEDED', details: null },
        { gateway_id: GW_A, id: id(11), status: 'SUCCEEDED', details: null },
        { gateway_id: GW_B, id: id(10), status: 'SUCCEEDED', details: null },
        { gateway_id: GW_A, id: id(8), status: 'FAILED', details: null },
        { gateway_id: GW_A, id: id(78), status: 'FAILED', details: null },
      ],
      T0 + 51,
      true,
    );
    expect(outcomes.map((o) => (typeof o === 'string' ? o : [o.id, o.status, o.details]))).toEqual([
      [id(11), 'FAILED', 'jammed'],
      [id(10), 'SUCCEEDED', null],
      'final',
      'unknown',
      'final',
      'unknown',
    ]);
    const entries = await store.audit.newestBefore('acme', T0 + 51, { time: T0 + 52, id: '' }, 100);
    expect(entries.entries.map((e) => [e.action, e.target?.id]).sort()).toEqual([['command.failed', id(11)], ['command.succeeded', id(10)]]);
  });

  it('keeps a subscription for the next persistent session; a clean session drops it', async () => {
    expect(await store.commands.session(GW_A, false)).toBeUndefined();
    await store.commands.subscribe(GW_A, 1, T0);
    await store.commands.subscribe(GW_A, 0, T0);
    expect(await store.commands.session(GW_A, false)).toBe(0);
    expect(await store.commands.session(GW_A, true)).toBeUndefined();
    expect(await store.commands.session(GW_A, false)).toBeUndefined();
    await store.commands.subscribe(GW_B, 1, T0);
    await store.commands.unsubscribe(GW_B);
    expect(await store.commands.session(GW_B, false)).toBeUndefined();
    expect(await query('SELECT count(*) AS n FROM command_subscriptions')).toEqual([{ n: kind === 'sqlite' ? 0 : '0' }]);
  });
}

describe('SQLite store: commands', () => contract('sqlite'));

describePostgres('PostgreSQL store: commands', () => {
  contract('postgres');
  it('answered every read with the same bytes as the SQLite store', () => {
    expect(transcripts.postgres!.length).toBe(4);
    expect(transcripts.postgres).toEqual(transcripts.sqlite);
  });
});
