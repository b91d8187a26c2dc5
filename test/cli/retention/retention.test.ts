// `scanhub retention get|set` as processes (docs/retention.md): what they print piped and with
// --json, the change they make, and every refusal with its exit code.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS } from '../../../src/domain/retention.js';
import { runCli } from '../../helpers/cli.js';
import { eventRow } from '../../helpers/events.js';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';

let t: TestServer;
let admin: NodeJS.ProcessEnv;

beforeAll(async () => {
  t = await startTestServer();
  admin = { SCANHUB_URL: t.url, SCANHUB_TOKEN: t.adminToken };
});
afterAll(async () => {
  await t?.close();
});

const usage = (stderr: string) => ({ code: 2, stdout: '', stderr });

describe('scanhub retention', () => {
  it('get: for ever and no deletion on a new customer, as field<TAB>value lines when piped', async () => {
    expect(await runCli(['retention', 'get'], { env: admin })).toEqual({
      code: 0,
      stdout: 'events_kept\tfor ever\nlast_deletion\tnever\ndeleted\t\nolder_than\t\nlongest_batch\t\n',
      stderr: '',
    });
  });

  it('set --events-days N: the old events go; get shows the deletion, --json the API object', async () => {
    const now = Date.now();
    const old = Array.from({ length: 3 }, (_, i) => eventRow({ created: now - 8 * DAY_MS - i }));
    await t.server.ctx.store.events.insert(CUSTOMER, [...old, eventRow({ created: now - 60_000 })]);
    const set = await runCli(['retention', 'set', '--events-days', '7'], { env: admin });
    expect(set).toEqual({
      code: 0,
      stdout: '',
      stderr: `Events of ${CUSTOMER} are now kept 7 days: older ones are deleted in small batches, starting now (\`scanhub retention get\` shows the last deletion).\n`,
    });
    await t.server.ctx.retention.idle();

    const json = await runCli(['retention', 'get', '--json'], { env: admin });
    expect(json.code).toBe(0);
    const retention = JSON.parse(json.stdout) as { events_days: number; last_deletion: { finished: number; cutoff: number; deleted: number; longest_batch_ms: number } };
    expect(retention).toEqual({
      events_days: 7,
      last_deletion: { started: expect.any(Number), finished: expect.any(Number), cutoff: expect.any(Number), deleted: 3, batches: 1, longest_batch_ms: expect.any(Number) },
    });
    const { finished, cutoff, longest_batch_ms } = retention.last_deletion;
    expect(await runCli(['retention', 'get'], { env: admin })).toEqual({
      code: 0,
      stdout: `events_kept\t7 days\nlast_deletion\t${new Date(finished).toISOString()}\ndeleted\t3\nolder_than\t${new Date(cutoff).toISOString()}\nlongest_batch\t${longest_batch_ms} ms\n`,
      stderr: '',
    });
  });

  it('set --forever keeps events for ever; --json prints what the API answered', async () => {
    const set = await runCli(['retention', 'set', '--forever', '--json'], { env: admin });
    expect(set.code).toBe(0);
    expect(set.stderr).toBe(`Events of ${CUSTOMER} are now kept for ever.\n`);
    expect(JSON.parse(set.stdout)).toEqual({ events_days: null, last_deletion: expect.objectContaining({ deleted: 3 }) });
    expect(await t.admin.get(`/${CUSTOMER}/retention`)).toMatchObject({ events_days: null });
  });

  it('refuses set with neither or both of --events-days and --forever (exit 2), before asking the server', async () => {
    const refusal = usage('scanhub: retention set needs exactly one of --events-days N or --forever\n');
    // No deployment configured at all: the usage is refused first.
    expect(await runCli(['retention', 'set'])).toEqual(refusal);
    expect(await runCli(['retention', 'set', '--events-days', '30', '--forever'], { env: admin })).toEqual(refusal);
    expect(await t.admin.get(`/${CUSTOMER}/retention`)).toMatchObject({ events_days: null });
  });

  it.each(['0', '-3', '36501', '1.5', '30d', 'thirty'])('refuses --events-days %s (exit 2)', async (days) => {
    expect(await runCli(['retention', 'set', '--events-days', days], { env: admin })).toEqual(
      usage(`scanhub: --events-days: "${days}" is not a whole number of days from 1 to 36500 (use --forever to keep events for ever)\n`),
    );
  });

  it('serve refuses a --retention-rate that is not a number of events a second (exit 2) before it starts', async () => {
    for (const rate of ['0', '1.5', 'fast', '1000001']) {
      const refused = await runCli(['serve', '--data-dir', `/nonexistent/scanhub-${rate}`, '--retention-rate', rate]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`error: option '--retention-rate <n>' argument '${rate}' is invalid. "${rate}" is not a number of events a second (1-1000000).`);
    }
  });

  it('a user without the permission: exit 4 with the reason', async () => {
    const user = await t.createUser('USER_ROLE');
    const env = { SCANHUB_URL: t.url, SCANHUB_TOKEN: user.token };
    expect(await runCli(['retention', 'set', '--events-days', '30'], { env })).toEqual({
      code: 4,
      stdout: '',
      stderr: 'scanhub: not allowed: Your role USER_ROLE lacks the permission "retention.write" this call needs; ask an administrator\n',
    });
    expect(await runCli(['retention', 'get'], { env })).toEqual({
      code: 4,
      stdout: '',
      stderr: 'scanhub: not allowed: Your role USER_ROLE lacks the permission "retention.read" this call needs; ask an administrator\n',
    });
  });
});
