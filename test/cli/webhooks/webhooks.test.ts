// `scanhub webhooks create|list|test|deliveries|replay|rotate-secret|delete` as processes, against a
// real receiver that verifies each message with the Standard Webhooks library.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { eventRow } from '../../helpers/events.js';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';
import { insertEvents } from '../../helpers/store-rows.js';
import { until } from '../../helpers/until.js';
import { WebhookReceiver } from '../../helpers/webhook-receiver.js';

let t: TestServer;
let env: NodeJS.ProcessEnv;
let receiver: WebhookReceiver;

beforeAll(async () => {
  t = await startTestServer({ webhookAllowLoopback: true });
  env = { SCANHUB_URL: t.url, SCANHUB_TOKEN: t.adminToken };
  receiver = await new WebhookReceiver().start();
});
afterAll(async () => {
  await receiver?.stop();
  await t?.close();
});

describe('scanhub webhooks', () => {
  it('create prints the secret alone; test, deliveries, replay --since 1h, rotate-secret and delete work by URL', async () => {
    const created = await runCli(['webhooks', 'create', '--url', receiver.url, '--events', 'event.scan,alert.opened'], { env });
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^whsec_[A-Za-z0-9+/]{43}=\n$/);
    expect(created.stderr).toMatch(new RegExp(`^Created webhook [0-9a-f-]{36} to ${receiver.url.replace(/[.]/g, '\\.')} for event\\.scan, alert\\.opened\\. This is the only time the secret is shown`));
    receiver.secrets = [created.stdout.trim()];

    const listed = await runCli(['webhooks', 'list', '--json'], { env });
    const [webhook] = JSON.parse(listed.stdout) as { webhook_id: string; url: string; event_types: string[]; enabled: boolean }[];
    expect(webhook).toMatchObject({ url: receiver.url, event_types: ['event.scan', 'alert.opened'], enabled: true });

    const tested = await runCli(['webhooks', 'test', receiver.url], { env });
    expect(tested.code).toBe(0);
    const deliveryId = tested.stdout.trim();
    await receiver.waitFor((r) => r.messages.some((m) => m.id === deliveryId));

    const rows = [eventRow({ created: Date.now() - 30 * 60_000 }), eventRow({ created: Date.now() - 20 * 60_000 })];
    await insertEvents(t, CUSTOMER, rows);
    await receiver.waitFor((r) => r.events().length === 2);
    const deliveries = await until(
      async () => JSON.parse((await runCli(['webhooks', 'deliveries', webhook!.webhook_id, '--json'], { env })).stdout) as { type: string; status: string }[],
      (list) => list.length === 2 && list.every((d) => d.status === 'SUCCEEDED'),
    );
    expect(deliveries.map((d) => d.type)).toEqual(['event.batch', 'webhook.test']);

    const replayed = await runCli(['webhooks', 'replay', receiver.url, '--since', '1h'], { env });
    expect(replayed).toMatchObject({ code: 0, stdout: '' });
    expect(replayed.stderr).toMatch(/^Webhook [0-9a-f-]{36} sends the events created since .+ again\.\n$/);
    await receiver.waitFor((r) => r.events().length === 4);
    expect(receiver.events().map((e) => e.id)).toEqual([rows[0]!.id, rows[1]!.id, rows[0]!.id, rows[1]!.id]);

    const rotated = await runCli(['webhooks', 'rotate-secret', webhook!.webhook_id], { env });
    expect(rotated.stdout).toMatch(/^whsec_/);
    expect(rotated.stdout.trim()).not.toBe(receiver.secrets[0]);

    const refused = await runCli(['webhooks', 'delete', receiver.url], { env });
    expect(refused).toEqual({ code: 2, stdout: '', stderr: 'scanhub: --yes required when not running interactively\n' });
    const deleted = await runCli(['webhooks', 'delete', receiver.url, '--yes'], { env });
    expect(deleted).toMatchObject({ code: 0, stderr: `Deleted webhook ${webhook!.webhook_id} to ${receiver.url}.\n` });
    expect(JSON.parse((await runCli(['webhooks', 'list', '--json'], { env })).stdout)).toEqual([]);
  });

  it('refuses an unknown event type before calling (exit 2), and a loopback-refused URL with the API\'s sentence (exit 1)', async () => {
    expect(await runCli(['webhooks', 'create', '--url', receiver.url, '--events', 'event.scan,everything'], { env })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'scanhub: --events: unknown type "everything": use some of event.scan, event.telemetry, gateway.connectivity, command.status, alert.opened, alert.resolved, job.completed\n',
    });
    const linkLocal = await runCli(['webhooks', 'create', '--url', 'http://169.254.169.254/', '--events', 'event.scan'], { env });
    expect(linkLocal).toEqual({ code: 1, stdout: '', stderr: 'scanhub: bad request: Body field "url" is refused: 169.254.169.254 is link-local\n' });
    // The receiver as the argument; --url then names the deployment, as everywhere.
    const byArgument = await runCli(['webhooks', 'create', receiver.url, '--events', 'event.telemetry', '--url', t.url], { env: { SCANHUB_TOKEN: t.adminToken } });
    expect(byArgument.code).toBe(0);
  });
});
