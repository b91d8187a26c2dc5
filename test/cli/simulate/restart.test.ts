import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { SimulationSummary } from '../../../src/simulator/run.js';
import { BIN } from '../../helpers/cli.js';
import { call } from '../../helpers/http.js';
import { freePort, spawnServe, stop, type ServeProcess } from '../../helpers/serve-process.js';
import { testDatabase, type TestDatabase } from '../../helpers/test-store.js';
import { until } from '../../helpers/until.js';

// `scanhub simulate` (a process) while `serve` restarts under it: the broker closes every
// connection; mqtt.js reconnects and resends what was not acknowledged. (The simulator once
// removed mqtt.js's own 'close' listeners and never reconnected.) On either test store: the
// restarted serve keeps its CA (data directory or PostgreSQL), so the simulator's certificates stay valid.

const PASSWORD = 'restart-admin-password';
const dirs: string[] = [];
const serves: ServeProcess[] = [];
let database: TestDatabase | undefined;
afterAll(async () => {
  for (const serve of serves) await stop(serve);
  await database?.drop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

it('exits 0 with every message acknowledged when serve restarts mid-run', async () => {
  database = await testDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'scanhub-sim-restart-'));
  const config = mkdtempSync(join(tmpdir(), 'scanhub-sim-restart-config-'));
  dirs.push(dataDir, config);
  const [port, mqttPort] = [await freePort(), await freePort()];
  const start = async () => {
    const serve = spawnServe(['--data-dir', dataDir, '--port', String(port), '--mqtt-port', String(mqttPort)], {
      SCANHUB_ADMIN_PASSWORD: PASSWORD,
      SCANHUB_CUSTOMER_ID: 'acme',
      SCANHUB_LOG_LEVEL: 'warn',
    }, database);
    serves.push(serve);
    await serve.stderrMatches(/scanhub is serving/);
    return serve;
  };
  const first = await start();
  const url = `http://127.0.0.1:${port}`;
  const login = await call(url, 'POST', '/auth/login', { json: { email: 'admin@localhost', password: PASSWORD } });
  const token = (login.body as { id_token: string }).id_token;

  const child = spawn(process.execPath, [BIN, 'simulate', '--gateways', '2', '--rate', '10', '--duration', '6s', '--json'], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', SCANHUB_URL: url, SCANHUB_TOKEN: token, SCANHUB_CUSTOMER: 'acme', XDG_CONFIG_HOME: config },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));

  // Restart once the simulator's events are arriving (polled through the API: state, not time).
  const listed = async () => ((await call(url, 'GET', '/acme/events?start_time_millis=0&end_time_millis=' + (Date.now() + 3_600_000), { token })).body as { items: unknown[] }).items;
  await until(listed, (items) => items.length >= 5, { what: "the simulator's first events", timeoutMs: 60_000, everyMs: 5 });
  await stop(first);
  await start();

  expect({ code: await exited, stderr: stderr.includes('Error') ? stderr : '' }).toEqual({ code: 0, stderr: '' });
  const summary = JSON.parse(stdout) as SimulationSummary;
  expect(summary.messages_sent).toBeGreaterThan(10);
  expect(summary.messages_acknowledged).toBe(summary.messages_sent);
}, 90_000);
