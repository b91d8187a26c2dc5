import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/client/api.js';
import { call } from '../helpers/http.js';
import { connectGateway, provisionGateway } from '../helpers/mqtt.js';
import { ADMIN_PASSWORD, CUSTOMER } from '../helpers/server.js';
import { freePort, spawnServe, stop, type ServeProcess } from '../helpers/serve-process.js';

// `serve --min-created` and `--max-created-ahead` (and their variables) bound the `created` of
// MQTT events (docs/gateways-mqtt.md "Limits"), checked on a `serve` process as a user runs it.

const started: ServeProcess[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map(stop));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'scanhub-window-'));
  dirs.push(dir);
  return join(dir, 'data');
}

const HOUR = 3_600_000;

describe('serve --min-created, --max-created-ahead', () => {
  it.each([
    ['flags', ['--min-created', '2024-01-01T00:00:00Z', '--max-created-ahead', '1h'], {}],
    ['variables', [], { SCANHUB_MIN_CREATED: '2024-01-01T00:00:00Z', SCANHUB_MAX_CREATED_AHEAD: '1h' }],
  ])('from %s: events outside the window are acknowledged and dropped, those inside stored', async (_from, flags, env) => {
    const port = await freePort();
    const serve = spawnServe(['--data-dir', dataDir(), '--port', String(port), '--mqtt-port', '0', ...flags], {
      SCANHUB_ADMIN_PASSWORD: ADMIN_PASSWORD,
      SCANHUB_CUSTOMER_ID: CUSTOMER,
      SCANHUB_LOG_LEVEL: 'warn',
      ...env,
    });
    started.push(serve);
    await serve.stderrMatches(/scanhub is serving/);
    const url = `http://127.0.0.1:${port}`;
    const login = await call(url, 'POST', '/auth/login', { json: { email: 'admin@localhost', password: ADMIN_PASSWORD } });
    const anonymous = new ApiClient(url);
    const admin = new ApiClient(url, (login.body as { id_token: string }).id_token);
    const gateway = await provisionGateway({ admin, anonymous });
    const client = await connectGateway(gateway);
    try {
      const now = Date.now();
      const created = [Date.UTC(2023, 11, 31, 23, 59, 59, 999), Date.UTC(2024, 0, 1), now + HOUR - 60_000, now + HOUR + 60_000];
      for (const at of created) await client.publishAsync(gateway.topic, JSON.stringify({ type: 'scan', created: at }), { qos: 1 });
      const listed = await admin.get<{ items: { created: number }[] }>(`/${CUSTOMER}/events?start_time_millis=0&end_time_millis=${now + 2 * HOUR}`);
      expect(listed.items.map((event) => event.created).sort()).toEqual([created[1], created[2]]);
    } finally {
      await client.endAsync(true);
    }
    const refusals = serve.stdout().trimEnd().split('\n').map((line) => JSON.parse(line) as { msg: string; reason?: string }).filter((line) => line.msg === 'invalid message acknowledged and dropped');
    expect(refusals).toEqual([expect.objectContaining({ reason: expect.stringMatching(/^"created" must be milliseconds since the epoch from 2024-01-01T00:00:00.000Z to /) })]);
  });

  it.each([
    [['--min-created', '30d'], `error: option '--min-created <time>' argument '30d' is invalid. "30d" is relative; give a date such as 2000-01-01 or epoch milliseconds.\n`],
    [['--min-created', 'soon'], `error: option '--min-created <time>' argument 'soon' is invalid. "soon" is not a time: use ISO 8601 (2000-01-01, 2000-01-01T00:00:00Z) or epoch milliseconds.\n`],
    [['--max-created-ahead', '400d'], `error: option '--max-created-ahead <duration>' argument '400d' is invalid. "400d" is more than 366d.\n`],
    [['--max-created-ahead', 'a while'], `error: option '--max-created-ahead <duration>' argument 'a while' is invalid. "a while" is not a duration: use a number and a unit, e.g. 30s, 30m, 2h, 7d or 2w\n`],
  ])('%j: exit 2', async (flags, message) => {
    const serve = spawnServe(['--data-dir', dataDir(), ...flags]);
    started.push(serve);
    expect(await serve.exited).toEqual({ code: 2, signal: null });
    expect(serve.stderr()).toBe(`${message}(run with --help for usage)\n`);
  });
});
