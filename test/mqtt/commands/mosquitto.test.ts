// Commands with stock clients (docs/commands.md shows these lines): mosquitto_sub (MQTT 3.1.1) with
// the PEM files openssl takes out of a provisioned gateway's PKCS#12 receives a queued command, and
// mosquitto_pub reports its outcome.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ApiCommand } from '../../../src/domain/commands.js';
import { provisionGateway } from '../../helpers/mqtt.js';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';
import { until } from '../../helpers/until.js';

const run = promisify(execFile);

let t: TestServer;
let dir: string;
beforeEach(async () => {
  t = await startTestServer();
  dir = mkdtempSync(join(tmpdir(), 'scanhub-mosquitto-commands-'));
});
afterEach(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

it('mosquitto_sub receives a queued command at QoS 1 and mosquitto_pub reports it SUCCEEDED', async () => {
  const gateway = await provisionGateway(t);
  writeFileSync(join(dir, 'gateway.p12'), gateway.pkcs12);
  const openssl = (...args: string[]) => execFileSync('openssl', ['pkcs12', '-in', 'gateway.p12', '-passin', 'pass:', ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  openssl('-nokeys', '-clcerts', '-out', 'gateway.crt');
  openssl('-nokeys', '-cacerts', '-out', 'ca.crt');
  openssl('-nocerts', '-nodes', '-out', 'gateway.key');
  const tls = ['-h', 'localhost', '-p', String(t.server.mqttPort), '--cafile', 'ca.crt', '--cert', 'gateway.crt', '--key', 'gateway.key', '-V', 'mqttv311', '-q', '1'];

  const command = await t.admin.post<ApiCommand>(`/${CUSTOMER}/gateways/${gateway.id}/commands`, { name: 'feedback', parameters: { sequence: 'NOK' } });
  const received = await run('mosquitto_sub', [...tls, '-t', `${gateway.topic}/commands`, '-C', '1', '-W', '20'], { cwd: dir });
  expect(JSON.parse(received.stdout)).toEqual({ command_id: command.command_id, name: 'feedback', parameters: { sequence: 'NOK' }, created: command.created, expires_at: command.expires_at });
  await until(() => t.admin.get<ApiCommand>(`/${CUSTOMER}/commands/${command.command_id}`), (c) => c.status === 'DELIVERED');

  await run('mosquitto_pub', [...tls, '-t', `${gateway.topic}/command-responses`, '-m', JSON.stringify({ command_id: command.command_id, status: 'SUCCEEDED' })], { cwd: dir });
  expect(await t.admin.get<ApiCommand>(`/${CUSTOMER}/commands/${command.command_id}`)).toMatchObject({ status: 'SUCCEEDED' });
});
