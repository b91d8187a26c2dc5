// Not a benchmark (no .bench.js): the writes of the sustained part of commands.bench.js (50 commands
// every 100 ms, to 50 of 500 gateways, claimed, acknowledged, answered SUCCEEDED) on one SQLite
// connection, as the ingest writer thread runs them, without ingest: the CPU time per command.
// `node bench/command-writes-cpu.js [dist] [grouping]`: dist a build's dist/ (default this one's,
// /work/base36/dist for a base), grouping `turns` (each turn's writes a group of its own, as before
// session 36: create, claims, then the PUBACKs and the responses in three turns each) or `held`
// (the PUBACKs and responses held until the next creation, docs/commands.md "Delivery"; default).
import { mkdtempSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
const dist = process.argv[2] ?? new URL('../dist', import.meta.url).pathname;
const LAYOUT = process.argv[3] === 'turns' ? 'old' : 'new';
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
const now0 = Date.now();
db.prepare('INSERT INTO customers (id, created) VALUES (?, ?)').run('bench', now0);
const gw = [];
const ins = db.prepare("INSERT INTO gateways (id, customer_id, name, usecase, station, created, last_updated) VALUES (?, 'bench', ?, 'u', 's', ?, ?)");
for (let i = 0; i < 500; i++) { const id = randomUUID(); gw.push(id); ins.run(id, `g${i}`, now0, now0); }
const TICKS = Number(process.env.TICKS ?? 400);
let sent = 0; let jobs = 0; let cpu = 0;
const job = (writes) => { const t = process.cpuUsage(); runCommandWrites(db, writes); const d = process.cpuUsage(t); cpu += d.user + d.system; jobs++; };
let carry = [];
for (let tick = 0; tick < TICKS; tick++) {
  const now = now0 + tick * 100;
  const ids = Array.from({ length: 50 }, (_, i) => gw[(sent + i) % gw.length]); sent += 50;
  const commands = ids.map((g) => ({ id: idOf(now), gateway_id: g, device_id: null, name: 'feedback', parameters: '{"sequence":"OK"}', expires_at: now + 3600_000 }));
  const audit = commands.map((c) => ({ id: idOf(now), customerId: 'bench', time: now, action: 'command.created', actor: { type: 'user', id: 'u1' }, target: { type: 'command', id: c.id }, ip: '127.0.0.1', details: { gateway_id: c.gateway_id, name: c.name } }));
  const create = { kind: 'create', customerId: 'bench', commands, now, audit };
  const claims = { kind: 'claim', requests: ids.map((g) => ({ gateway_id: g, exclude: [], limit: 16 })), now };
  const parts = [commands.slice(0, 17), commands.slice(17, 34), commands.slice(34)];
  const acks = parts.map((part) => ({ kind: 'delivered', acks: part.map((c) => ({ id: c.id, gateway_id: c.gateway_id })), now: now + 5, audit: true }));
  const resps = parts.map((part) => ({ kind: 'respond', responses: part.map((c) => ({ id: c.id, gateway_id: c.gateway_id, status: 'SUCCEEDED', details: null })), now: now + 6, audit: true }));
  if (LAYOUT === 'old') { job([create]); job([claims]); for (let i = 0; i < 3; i++) { job([acks[i]]); job([resps[i]]); } }
  else { job([...carry, create]); job([claims]); carry = acks.flatMap((a, i) => [a, resps[i]]); }
}
if (carry.length) job(carry);
const n = TICKS * 50;
console.log(`${dist} ${LAYOUT === 'old' ? 'turns' : 'held'}: ${jobs} groups, ${(cpu / n).toFixed(1)} us CPU per command; SUCCEEDED ${db.prepare("SELECT count(*) FROM commands WHERE status='SUCCEEDED'").pluck().get()}`);
db.close();
rmSync(dir, { recursive: true });
