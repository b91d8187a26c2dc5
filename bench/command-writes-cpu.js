// Not a benchmark (no .bench.js): the writes of the sustained part of commands.bench.js (50 commands
// every 100 ms, to 50 of 500 gateways, claimed, acknowledged, answered SUCCEEDED) on one SQLite
// connection, as the ingest writer thread runs them, without ingest: the CPU time per command.
// `node bench/command-writes-cpu.js [dist...] [grouping]`: each dist a build's dist/ (default this
// one's; /work/base39c/dist for a base), grouping `turns` (each turn's writes a group of its own,
// as before session 36: create, claims, then the PUBACKs and the responses in three turns each) or
// `held` (the PUBACKs and responses held until the next creation, docs/commands.md "Delivery";
// default). Several dists run in one process, each on its own database, tick by tick in turn (the
// order reversed every other tick): on a shared machine the load then falls on all of them alike.
import { mkdtempSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
const args = process.argv.slice(2);
const LAYOUT = args.includes('turns') ? 'old' : 'new';
const dists = args.filter((a) => a !== 'turns' && a !== 'held');
if (dists.length === 0) dists.push(new URL('../dist', import.meta.url).pathname);
const TICKS = Number(process.env.TICKS ?? 400);
const now0 = Date.now();
const gw = Array.from({ length: 500 }, () => randomUUID());

/** A build's connection, its writes and its counts. */
async function setup(dist) {
  const { openDatabase } = await import(`${dist}/store/sqlite/open.js`);
  const { runCommandWrites } = await import(`${dist}/store/sqlite/command-writes.js`);
  // The ids as that build makes them: time-ordered where it has domain/command-ids.js.
  let idOf = () => randomUUID();
  try {
    const ids = await import(`${dist}/domain/command-ids.js`);
    idOf = (now) => ids.timeOrderedUuid(now);
  } catch {}
  const dir = mkdtempSync(join(tmpdir(), 'cmdmicro-'));
  const db = openDatabase(join(dir, 'scanhub.db'));
  db.pragma('cache_size = -65536');
  db.pragma('wal_autocheckpoint = 20000');
  db.prepare('INSERT INTO customers (id, created) VALUES (?, ?)').run('bench', now0);
  const ins = db.prepare("INSERT INTO gateways (id, customer_id, name, usecase, station, created, last_updated) VALUES (?, 'bench', ?, 'u', 's', ?, ?)");
  gw.forEach((id, i) => ins.run(id, `g${i}`, now0, now0));
  return { dist, dir, db, runCommandWrites, idOf, cpu: 0, jobs: 0, carry: [] };
}

function job(s, writes) {
  const t = process.cpuUsage();
  s.runCommandWrites(s.db, writes);
  const d = process.cpuUsage(t);
  s.cpu += d.user + d.system;
  s.jobs++;
}

function tick(s, ids, now) {
  const commands = ids.map((g) => ({ id: s.idOf(now), gateway_id: g, device_id: null, name: 'feedback', parameters: '{"sequence":"OK"}', expires_at: now + 3600_000 }));
  const audit = commands.map((c) => ({ id: s.idOf(now), customerId: 'bench', time: now, action: 'command.created', actor: { type: 'user', id: 'u1' }, target: { type: 'command', id: c.id }, ip: '127.0.0.1', details: { gateway_id: c.gateway_id, name: c.name } }));
  const create = { kind: 'create', customerId: 'bench', commands, now, audit };
  const claims = { kind: 'claim', requests: ids.map((g) => ({ gateway_id: g, exclude: [], limit: 16 })), now };
  const parts = [commands.slice(0, 17), commands.slice(17, 34), commands.slice(34)];
  const acks = parts.map((part) => ({ kind: 'delivered', acks: part.map((c) => ({ id: c.id, gateway_id: c.gateway_id })), now: now + 5, audit: true }));
  const resps = parts.map((part) => ({ kind: 'respond', responses: part.map((c) => ({ id: c.id, gateway_id: c.gateway_id, status: 'SUCCEEDED', details: null })), now: now + 6, audit: true }));
  if (LAYOUT === 'old') { job(s, [create]); job(s, [claims]); for (let i = 0; i < 3; i++) { job(s, [acks[i]]); job(s, [resps[i]]); } }
  else { job(s, [...s.carry, create]); job(s, [claims]); s.carry = acks.flatMap((a, i) => [a, resps[i]]); }
}

const setups = [];
for (const dist of dists) setups.push(await setup(dist));
let sent = 0;
for (let t = 0; t < TICKS; t++) {
  const ids = Array.from({ length: 50 }, (_, i) => gw[(sent + i) % gw.length]); sent += 50;
  for (const s of t % 2 ? [...setups].reverse() : setups) tick(s, ids, now0 + t * 100);
}
const n = TICKS * 50;
for (const s of setups) {
  if (s.carry.length) job(s, s.carry);
  console.log(`${s.dist} ${LAYOUT === 'old' ? 'turns' : 'held'}: ${s.jobs} groups, ${(s.cpu / n).toFixed(1)} us CPU per command; SUCCEEDED ${s.db.prepare("SELECT count(*) FROM commands WHERE status='SUCCEEDED'").pluck().get()}`);
  s.db.close();
  rmSync(s.dir, { recursive: true });
}
