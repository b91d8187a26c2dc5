// `scanhub simulate` answers commands (docs/commands.md "CLI"): its gateways subscribe to their
// command topic, print each command on stderr and answer SUCCEEDED for a name they know, FAILED
// for any other; a command queued while the simulator is stopped waits QUEUED and is answered
// when it starts again. Followed by `scanhub commands send --wait` as a user runs both.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ApiCommand } from '../../../src/domain/commands.js';
import { adminEnv, runCli, spawnCli, type RunningCli } from '../../helpers/cli.js';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';

let t: TestServer;
let config: string;
let env: NodeJS.ProcessEnv;
const running: RunningCli[] = [];
beforeAll(async () => {
  t = await startTestServer();
  config = mkdtempSync(join(tmpdir(), 'scanhub-sim-commands-'));
  env = adminEnv(t, { XDG_CONFIG_HOME: config });
});
afterAll(async () => {
  for (const cli of running) cli.kill('SIGKILL');
  await t.close();
  rmSync(config, { recursive: true, force: true });
});

const simulate = async () => {
  const cli = spawnCli(['simulate', '--gateways', '3', '--rate', '1', '--duration', '10m'], env);
  running.push(cli);
  await cli.printed('Publishing', 'stderr');
  return cli;
};
const read = (id: string) => t.admin.get<ApiCommand>(`/${CUSTOMER}/commands/${id}`);

it('answers each command on stderr and to the service; `commands send --wait` prints SUCCEEDED and exits 0', async () => {
  const sim = await simulate();
  const waited = await runCli(['commands', 'send', 'sim-1', '--name', 'feedback', '--param', 'sequence=OK', '--wait'], { env });
  expect(waited.code).toBe(0);
  expect(waited.stdout.split('\t')[4]).toBe('SUCCEEDED');
  await sim.printed('command feedback {"sequence":"OK"}', 'stderr');
  const unknown = await runCli(['--json', 'commands', 'send', 'sim-2', '--name', 'self.destruct', '--wait'], { env });
  expect(unknown.code).toBe(1);
  expect(JSON.parse(unknown.stdout)).toMatchObject([{ status: 'FAILED', details: 'the simulator does not know the command "self.destruct"' }]);
  expect(sim.stderr()).toMatch(/gateway sim-2: command self\.destruct \{\} \([0-9a-f-]{36}\): answered FAILED/);

  // Stopped: a command with --ttl 5m waits QUEUED, and is answered once the simulator runs again.
  sim.kill('SIGTERM');
  await sim.exited;
  const queued = JSON.parse((await runCli(['--json', 'commands', 'send', 'sim-3', '--name', 'display', '--parameters', '{"template":"hello"}', '--ttl', '5m'], { env })).stdout) as ApiCommand[];
  expect((await read(queued[0]!.command_id)).status).toBe('QUEUED');
  const again = await simulate();
  await again.printed(`(${queued[0]!.command_id}): answered SUCCEEDED`, 'stderr');
  await expect.poll(async () => (await read(queued[0]!.command_id)).status).toBe('SUCCEEDED');
});
