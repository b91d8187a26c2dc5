// Commands across restarts of a `serve` process (docs/commands.md "Delivery"): kill -9 between the
// PUBLISH of a command and its PUBACK, and the gateway's next connection (a persistent session,
// no new SUBSCRIBE) gets it again with DUP, with a command created while it was offline after it;
// once acknowledged, neither is sent again after another kill -9.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ApiClient } from '../../src/client/api.js';
import type { ApiCommand } from '../../src/domain/commands.js';
import { call } from '../helpers/http.js';
import { provisionGateway } from '../helpers/mqtt.js';
import { ADMIN_PASSWORD, CUSTOMER } from '../helpers/server.js';
import { freePort, spawnServe, stop, type ServeProcess } from '../helpers/serve-process.js';
import { testDatabase, type TestDatabase } from '../helpers/test-store.js';
import { until } from '../helpers/until.js';
import { RawGateway } from '../mqtt/commands/raw-gateway.js';

const started: ServeProcess[] = [];
const raws: RawGateway[] = [];
let dir: string | undefined;
let database: TestDatabase | undefined;
afterEach(async () => {
  await Promise.all(raws.splice(0).map((raw) => raw.close()));
  await Promise.all(started.splice(0).map(stop));
  await database?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('kill -9 before the PUBACK: sent again with DUP after the restart; acknowledged, never again', { timeout: 120_000 }, async () => {
  dir = mkdtempSync(join(tmpdir(), 'scanhub-commands-restart-'));
  database = await testDatabase();
  const [port, mqttPort] = [await freePort(), await freePort()];
  const serve = async () => {
    const process = spawnServe(['--data-dir', join(dir!, 'data'), '--port', String(port), '--mqtt-port', String(mqttPort)], {
      SCANHUB_ADMIN_PASSWORD: ADMIN_PASSWORD,
      SCANHUB_CUSTOMER_ID: CUSTOMER,
      SCANHUB_LOG_LEVEL: 'warn',
    }, database);
    started.push(process);
    await process.stderrMatches(/scanhub is serving/);
    return process;
  };
  const kill = async (process: ServeProcess) => {
    process.child.kill('SIGKILL');
    expect(await process.exited).toEqual({ code: null, signal: 'SIGKILL' });
  };
  const connect = async (clean: boolean) => {
    const raw = await RawGateway.connect(gateway, clean);
    raws.push(raw);
    return raw;
  };

  let running = await serve();
  const url = `http://127.0.0.1:${port}`;
  const login = await call(url, 'POST', '/auth/login', { json: { email: 'admin@localhost', password: ADMIN_PASSWORD } });
  const admin = new ApiClient(url, (login.body as { id_token: string }).id_token);
  const gateway = await provisionGateway({ admin, anonymous: new ApiClient(url) });
  const send = (name: string) => admin.post<ApiCommand>(`/${CUSTOMER}/gateways/${gateway.id}/commands`, { name, ttl_seconds: 600 });
  const statusOf = async (command: ApiCommand) => (await admin.get<ApiCommand>(`/${CUSTOMER}/commands/${command.command_id}`)).status;

  const first = await send('first');
  const before = await connect(false);
  expect(await before.subscribe([`${gateway.topic}/commands`])).toEqual([1]);
  expect(await before.publish()).toMatchObject({ dup: false, message: { command_id: first.command_id } });
  await kill(running);
  await before.close();

  running = await serve();
  const offline = await send('while-offline');
  const after = await connect(false);
  const again = [await after.publish(), await after.publish()];
  expect(again.map((p) => [p.message.command_id, p.dup])).toEqual([
    [first.command_id, true],
    [offline.command_id, false],
  ]);
  for (const p of again) after.puback(p.packetId);
  await until(() => Promise.all([statusOf(first), statusOf(offline)]), (s) => s.every((status) => status === 'DELIVERED'));
  await kill(running);
  await after.close();

  running = await serve();
  const last = await connect(false);
  expect(await last.before()).toEqual([]);
  expect([await statusOf(first), await statusOf(offline)]).toEqual(['DELIVERED', 'DELIVERED']);
});
