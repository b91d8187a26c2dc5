// A worker thread of the job benchmark: inserts events in group-commit-sized transactions into
// the benchmark database for a while and reports the rate. A stand-in for MQTT ingest at the
// SQLite level (same tables and indexes), until the broker's load generator exists.
import { randomUUID } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { insertEvents } from '../dist/store/event-rows.js';
import { openDatabase } from '../dist/store/open.js';

const { file, customer, gatewayIds, seconds, batch, after } = workerData;
const db = openDatabase(file);
let inserted = 0;
const started = performance.now();
while (performance.now() - started < seconds * 1000) {
  const rows = [];
  for (let i = 0; i < batch; i++) {
    const gateway = gatewayIds[(inserted + i) % gatewayIds.length];
    rows.push({
      id: randomUUID(), class: 'event', type: 'scan', created: after + inserted + i, scan_code: `40063813${(inserted + i) % 100000}`,
      scan_duration: 120, scan_decode_symbology: 'EAN-13', device_id: 'scanner', device_battery: null, device_firmware: null,
      device_temperature: null, gateway_id: gateway, gateway_usecase: 'packing', gateway_station: 'station', metrics_worker_steps: null,
    });
  }
  inserted += insertEvents(db, customer, rows);
}
const rate = inserted / ((performance.now() - started) / 1000);
// Leave the cached database as seeded.
db.prepare('DELETE FROM events WHERE created >= ?').run(after);
db.close();
parentPort.postMessage({ inserted, rate });
