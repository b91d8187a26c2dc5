// `scanhub alerts list|rules create|rules list|rules delete` as processes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';
import { insertGateway, selectRows } from '../../helpers/store-rows.js';
import { until } from '../../helpers/until.js';

let t: TestServer;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  t = await startTestServer({ alertIntervalMs: 50 });
  env = { SCANHUB_URL: t.url, SCANHUB_TOKEN: t.adminToken };
});
afterAll(async () => {
  await t?.close();
});

describe('scanhub alerts', () => {
  it('rules create --after 60s, alerts list --state OPEN shows the offline gateway, rules delete', async () => {
    const dock = await insertGateway(t, CUSTOMER, 'dock-9');
    await selectRows(t, 'UPDATE gateways SET last_message = ? WHERE id = ?', Date.now() - 120_000, dock);
    const created = await runCli(['alerts', 'rules', 'create', '--kind', 'gateway_offline', '--after', '60s', '--json'], { env });
    expect(created.code).toBe(0);
    const rule = JSON.parse(created.stdout) as { rule_id: string };
    expect(rule).toEqual({ rule_id: expect.any(String), kind: 'gateway_offline', after_seconds: 60, created: expect.any(Number) });

    const open = await until(
      async () => JSON.parse((await runCli(['alerts', 'list', '--state', 'OPEN', '--json'], { env })).stdout) as { subject: object; kind: string }[],
      (list) => list.length === 1,
    );
    expect(open[0]).toMatchObject({ kind: 'gateway_offline', subject: { type: 'gateway', id: dock } });
    const table = await runCli(['alerts', 'list'], { env });
    expect(table.stdout).toMatch(new RegExp(`^[0-9a-f-]{36}\\tgateway_offline\\tgateway dock-9\\tOPEN\\t`, 'm'));

    expect((await runCli(['alerts', 'rules', 'list'], { env })).stdout).toMatch(new RegExp(`^${rule.rule_id}\\tgateway_offline\\tafter 60s\\t`, 'm'));
    expect(await runCli(['alerts', 'rules', 'delete', rule.rule_id], { env })).toEqual({ code: 0, stdout: '', stderr: `Deleted alert rule ${rule.rule_id}.\n` });
    expect(JSON.parse((await runCli(['alerts', 'rules', 'list', '--json'], { env })).stdout)).toEqual([]);
  });
});
