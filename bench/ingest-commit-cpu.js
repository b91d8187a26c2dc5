// Not a benchmark (no .bench.js): SQLite's group commit as the ingest writer thread runs it with the
// webhooks' hand-off on (createCommitter, handOff: the events' JSON packed), batches of 500
// messages like stores-ingest's (200 gateways, random ids), on a database file per build: the
// CPU time per event stored (bench/README.md "webhooks", session 39). `node
// bench/ingest-commit-cpu.js [dist ...]` (default this build's dist/); several dists run in one
// process, batch by batch in turn (the order reversed every other batch), so the machine's load
// falls on all alike; BATCHES (300) per build, the first 20 not counted.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const dists = process.argv.slice(2);
if (dists.length === 0) dists.push(new URL('../dist', import.meta.url).pathname);
const BATCHES = Number(process.env.BATCHES ?? 300);
const GWS = Array.from({ length: 200 }, () => randomUUID());
async function setup(dist) {
  const { openDatabase } = await import(`${dist}/store/sqlite/open.js`);
  const { insertCustomer } = await import(`${dist}/store/sqlite/customers.js`);
  const { insertGateways } = await import(`${dist}/store/sqlite/gateways.js`);
  const { createCommitter } = await import(`${dist}/store/sqlite/ingest-commit.js`);
  const dir = mkdtempSync(join(tmpdir(), 'commit-ab-'));
  const db = openDatabase(join(dir, 'scanhub.db'));
  insertCustomer(db, 'acme', 1);
  insertGateways(db, 'acme', GWS.map((id, i) => ({ id, name: `g${i}`, usecase: 'picking', station: 'S1' })), 1);
  return { dist, dir, db, commit: createCommitter(db), cpu: 0, n: 0 };
}
let counter = 0;
function batch() {
  const now = Date.now();
  return Array.from({ length: 500 }, (_, i) => {
    const g = i % GWS.length;
    const payload = Buffer.from(JSON.stringify({ id: randomUUID(), class: 'event', type: i % 7 ? 'scan' : 'telemetry', created: now - 1000 + (counter++ % 1000), scan_code: `4006381333931-${g}`, scan_duration: 142, scan_decode_symbology: 'EAN-13', device_id: `scanner-${g}-a`, device_battery: 87, device_firmware: '2.4.1', device_temperature: 31.5 }));
    return { gatewayId: GWS[g], receivedAt: now, payload };
  });
}
const builds = [];
for (const d of dists) builds.push(await setup(d));
for (let t = 0; t < BATCHES; t++) {
  const order = t % 2 ? [...builds].reverse() : builds;
  for (const b of order) {
    const msgs = batch();
    const start = process.cpuUsage();
    const result = b.commit(msgs, undefined, true);
    const u = process.cpuUsage(start);
    if (t >= 20) { b.cpu += u.user + u.system; b.n += result.events; }
    if (!result.committed) throw new Error('no hand-off');
  }
}
for (const b of builds) {
  console.log(JSON.stringify({ bench: 'ingest-commit-cpu', dist: b.dist, metric: 'cpu_us_per_event', value: Number((b.cpu / b.n).toFixed(2)), unit: 'µs' }));
  b.db.close();
  rmSync(b.dir, { recursive: true, force: true });
}
