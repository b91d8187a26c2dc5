import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MqttClient } from 'mqtt';
import { afterAll, expect, it } from 'vitest';
import { ApiClient } from '../../../src/client/api.js';
import { spawnCli } from '../../helpers/cli.js';
import { GatewayClients, provisionGateway, type TestGateway } from '../../helpers/mqtt.js';
import { freePort, spawnServe, stop, type ServeProcess } from '../../helpers/serve-process.js';
import { testDatabase, type TestDatabase } from '../../helpers/test-store.js';

// `scanhub events tail` (a process) on the live stream of `scanhub serve` (a process), with
// events published over MQTT with TLS, while serve stops and starts again under it: the tail
// reconnects by itself with the id of the last event it printed, so it prints every event once.

const PASSWORD = 'tail-admin-password';
const dirs: string[] = [];
const serves: ServeProcess[] = [];
const gateways = new GatewayClients();
let database: TestDatabase | undefined;
afterAll(async () => {
  await gateways.endAll();
  for (const serve of serves) await stop(serve);
  await database?.drop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Resolves once the serve process logged that a live stream started (it logs at info level). */
function streamStarted(serve: ServeProcess): Promise<void> {
  return new Promise((resolve) => {
    const seen = () => serve.stdout().includes('"live event stream started"');
    if (seen()) return resolve();
    const check = () => {
      if (!seen()) return;
      serve.child.stdout!.off('data', check);
      resolve();
    };
    serve.child.stdout!.on('data', check);
  });
}

it('prints events published over MQTT, each once, and goes on by itself after serve restarts; exits 0 on SIGTERM', async () => {
  database = await testDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'scanhub-tail-'));
  dirs.push(dataDir);
  const [port, mqttPort] = [await freePort(), await freePort()];
  const start = async () => {
    const serve = spawnServe(
      ['--data-dir', dataDir, '--port', String(port), '--mqtt-port', String(mqttPort), '--mqtt-public-host', 'localhost'],
      { SCANHUB_ADMIN_PASSWORD: PASSWORD, SCANHUB_CUSTOMER_ID: 'acme', SCANHUB_LOG_LEVEL: 'info' },
      database,
    );
    serves.push(serve);
    await serve.stderrMatches(/scanhub is serving/);
    return serve;
  };
  let serve = await start();
  const url = `http://127.0.0.1:${port}`;
  const anonymous = new ApiClient(url);
  const { id_token: token } = await anonymous.post<{ id_token: string }>('/auth/login', { email: 'admin@localhost', password: PASSWORD });
  const gateway: TestGateway = await provisionGateway({ admin: new ApiClient(url, token), anonymous }, { name: 'tailed' });
  const publish = async (client: MqttClient, code: string) => {
    const id = randomUUID();
    await client.publishAsync(gateway.topic, JSON.stringify({ id, type: 'scan', scan_code: code }), { qos: 1 });
    return id;
  };

  const tail = spawnCli(['events', 'tail', '--gateway', gateway.id], { SCANHUB_URL: url, SCANHUB_TOKEN: token, SCANHUB_CUSTOMER: 'acme' });

  await streamStarted(serve);
  let mqtt = await gateways.connect(gateway);
  const ids = [await publish(mqtt, 'before-1'), await publish(mqtt, 'before-2')];
  await tail.printed(ids[1]!);

  await stop(serve);
  await tail.printed('reconnecting…', 'stderr');
  serve = await start();
  mqtt = await gateways.connect(gateway);
  // Stored before or after the tail is back: it resumes after the last event it printed either way.
  ids.push(await publish(mqtt, 'after-1'));
  await tail.printed(ids[2]!);
  ids.push(await publish(mqtt, 'after-2'));
  await tail.printed(ids[3]!);

  tail.kill('SIGTERM');
  expect(await tail.exited).toBe(0);
  expect(tail.stdout().split('\n').filter(Boolean).map((line) => line.split('\t').slice(1))).toEqual(
    // The gateway by name beside its short id (DESIGN.md "CLI conventions").
    ['before-1', 'before-2', 'after-1', 'after-2'].map((code, i) => ['scan', `tailed (${gateway.id.slice(0, 8)})`, '', code, ids[i]]),
  );
  // Each failed attempt while serve was away says why (refused, cut by the stopping serve, or
  // turned away by a closing serve: which ones depends on timing), then the way back once.
  const lines = tail.stderr().split('\n').filter(Boolean);
  expect(lines.at(-1)).toBe('Connection restored.');
  expect(lines.length).toBeGreaterThanOrEqual(2);
  const escaped = url.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const away = new RegExp(`^(cannot reach ${escaped}: .+|Service Unavailable: The server is shutting down: retry in a moment\\.); reconnecting…$`);
  for (const line of lines.slice(0, -1)) expect(line).toMatch(away);
}, 90_000);
