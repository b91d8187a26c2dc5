// `scanhub commands send|list|cancel` as a process: gateways by name or id, one call per gateway
// or a bulk call for several, `--wait` following a command to its outcome (exit 0 on SUCCEEDED, 1
// otherwise; the gateway's answer is made through the store here, the MQTT loop is
// test/mqtt/commands/), the list newest first, cancel and its refusal.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Command } from '../../../src/client/commands.js';
import { adminEnv, runCli, spawnCli } from '../../helpers/cli.js';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';
import { until } from '../../helpers/until.js';

let t: TestServer;
let env: NodeJS.ProcessEnv;
let dock1: string;
let dock2: string;

beforeAll(async () => {
  t = await startTestServer();
  env = adminEnv(t);
  const made = await t.admin.post<{ id: string }[]>(`/${CUSTOMER}/gateways/bulk-create`, {
    gateways: [1, 2].map((n) => ({ name: `dock-${n}`, usecase: 'u', station: 's' })),
  });
  [dock1, dock2] = made.map((g) => g.id) as [string, string];
});
afterAll(() => t.close());

const cli = (args: string[]) => runCli(args, { env });
const commandsOf = (gatewayId: string) => t.admin.get<{ items: Command[] }>(`/${CUSTOMER}/gateways/${gatewayId}/commands`).then((page) => page.items);

/** Runs `send ... --wait` and answers its one command through the store as the gateway would. */
async function waitFor(name: string, status: 'SUCCEEDED' | 'FAILED') {
  const before = (await commandsOf(dock1)).length;
  const running = spawnCli(['--json', 'commands', 'send', 'dock-1', '--name', name, '--wait'], env);
  const [queued] = await until(() => commandsOf(dock1), (items) => items.length > before, { what: 'the command of --wait' });
  await running.printed('waiting for the outcome', 'stderr');
  await t.server.ctx.store.commands.respond([{ gateway_id: dock1, id: queued!.command_id, status, details: status === 'FAILED' ? 'unknown command' : null }], Date.now());
  return { code: await running.exited, printed: JSON.parse(running.stdout()) as Command[], stderr: running.stderr() };
}

describe('scanhub commands send', () => {
  it('queues a command by gateway name with its parameters, device and ttl; --json prints the API\'s items', async () => {
    const result = await cli(['--json', 'commands', 'send', 'dock-1', '--name', 'feedback', '--param', 'sequence=OK', '--device', 'ring-1', '--ttl', '10m']);
    expect(result.code).toBe(0);
    const [sent] = JSON.parse(result.stdout) as Command[];
    expect(sent).toMatchObject({ gateway_id: dock1, device_id: 'ring-1', name: 'feedback', parameters: { sequence: 'OK' }, status: 'QUEUED' });
    expect(sent!.expires_at - sent!.created).toBe(600_000);
    expect((await commandsOf(dock1))[0]).toEqual(sent);
  });

  it('several gateways: one command each, in the order named; piped, tab-separated rows with the gateway\'s name', async () => {
    const result = await cli(['commands', 'send', dock2, 'dock-1', '--name', 'display', '--parameters', '{"template":"pick","fields":{"n":3}}']);
    expect(result.code).toBe(0);
    const rows = result.stdout.trim().split('\n').map((row) => row.split('\t'));
    expect(rows.map((row) => [row[1], row[3], row[4]])).toEqual([
      [`dock-2 (${dock2.slice(0, 8)})`, 'display', 'QUEUED'],
      [`dock-1 (${dock1.slice(0, 8)})`, 'display', 'QUEUED'],
    ]);
    expect(result.stderr).toBe('Queued 2 commands "display": `scanhub commands list <gateway>` shows how far they got.\n');
  });

  it('--wait exits 0 once the gateway reports SUCCEEDED, printing the command so', async () => {
    const { code, printed } = await waitFor('beep', 'SUCCEEDED');
    expect(code).toBe(0);
    expect(printed).toMatchObject([{ name: 'beep', status: 'SUCCEEDED', gateway_id: dock1 }]);
  });

  it('--wait exits 1 when the gateway reports FAILED, saying so', async () => {
    const { code, printed, stderr } = await waitFor('unknown.thing', 'FAILED');
    expect(code).toBe(1);
    expect(printed).toMatchObject([{ name: 'unknown.thing', status: 'FAILED', details: 'unknown command' }]);
    expect(stderr).toContain('1 of 1 command did not succeed: FAILED.');
  });

  it('refuses a bad name with the API\'s sentence, and an unknown gateway name before any call', async () => {
    expect(await cli(['commands', 'send', 'dock-1', '--name', 'Bad'])).toMatchObject({ code: 1, stderr: expect.stringContaining('Field "name" must match') });
    expect(await cli(['commands', 'send', 'dock-9', '--name', 'x'])).toMatchObject({ code: 1, stderr: expect.stringContaining('no gateway is named "dock-9"') });
    expect(await cli(['commands', 'send', 'dock-1', '--name', 'x', '--ttl', '8d'])).toMatchObject({ code: 2 });
  });
});

describe('scanhub commands list and cancel', () => {
  it('lists a gateway\'s commands newest first; cancels a QUEUED one; a second cancel exits 1 saying why', async () => {
    const sent = (JSON.parse((await cli(['--json', 'commands', 'send', 'dock-2', '--name', 'later'])).stdout) as Command[])[0]!;
    const listed = await cli(['--json', 'commands', 'list', 'dock-2']);
    expect((JSON.parse(listed.stdout) as Command[]).map((c) => c.name)).toEqual(['later', 'display']);
    const canceled = await cli(['--json', 'commands', 'cancel', sent.command_id]);
    expect(canceled.code).toBe(0);
    expect(JSON.parse(canceled.stdout)).toMatchObject({ command_id: sent.command_id, status: 'CANCELED' });
    const again = await cli(['commands', 'cancel', sent.command_id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`Command "${sent.command_id}" is CANCELED: only a QUEUED command can be canceled`);
  });
});
