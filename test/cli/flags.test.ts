import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminEnv, runCli } from '../helpers/cli.js';
import { eventRow } from '../helpers/events.js';
import { CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';
import { insertEvents } from '../helpers/store-rows.js';

// The one range grammar of every ranged command (DESIGN "CLI conventions"): --since/--until, each a
// duration, a date, a date-time or epoch milliseconds; --from/--to kept as hidden aliases.
const T0 = Date.UTC(2025, 0, 2, 10);
const HOUR = 3_600_000;
const rows = [0, 1, 2].map((n) => eventRow({ created: T0 + n * HOUR, scan_code: `code-${n}` }));

let t: TestServer;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  t = await startTestServer();
  await insertEvents(t.server, CUSTOMER, rows);
  // Dates without a time are local midnight: pin the zone of the CLI process.
  env = adminEnv(t, { TZ: 'UTC' });
});
afterAll(() => t.close());

const codes = (stdout: string) => stdout.trimEnd().split('\n').filter(Boolean).map((line) => line.split('\t')[4]);

describe('--since and --until', () => {
  it.each([
    ['a date and a date-time', ['--since', '2025-01-02', '--until', '2025-01-02T11:30:00Z'], ['code-1', 'code-0']],
    ['epoch milliseconds', ['--since', String(T0 + HOUR), '--until', String(T0 + 2 * HOUR)], ['code-1']],
    ['the old --from/--to', ['--from', String(T0 + HOUR), '--to', '2025-01-03'], ['code-2', 'code-1']],
  ])('events list takes %s', async (_name, args, expected) => {
    const result = await runCli(['events', 'list', ...args], { env });
    expect([result.code, result.stderr, codes(result.stdout)]).toEqual([0, '', expected]);
  });

  it('events export takes them too', async () => {
    const result = await runCli(['events', 'export', '--since', '2025-01-02', '--until', String(T0 + HOUR), '-o', '-'], { env });
    expect([result.code, result.stdout.split('\r\n').filter((line) => line.includes('code-')).length]).toEqual([0, 1]);
  });

  it('audit takes --until and the old --from/--to as well', async () => {
    for (const args of [['--since', '2025-01-02', '--until', '2025-01-03'], ['--from', '2025-01-02', '--to', '2025-01-03']]) {
      expect(await runCli(['audit', ...args], { env })).toEqual({ code: 0, stdout: '', stderr: '' });
    }
  });

  it.each([
    [['--since', '2h', '--from', '3h'], 'scanhub: --from is the old name of --since: give one of them\n'],
    [['--until', 'now', '--to', 'now'], 'scanhub: --to is the old name of --until: give one of them\n'],
    [['--since', 'yesterday'], 'scanhub: --since: "yesterday" is not a time: use ISO 8601 (2024-05-01, 2024-05-01T08:00:00Z), epoch milliseconds, now, or a relative form such as 2h or 7d\n'],
    [['--since', '1h', '--until', '2h'], expect.stringMatching(/^scanhub: the range starts \(.*\) after it ends \(.*\)\n$/)],
  ])('refuses %j with exit code 2', async (args, stderr) => {
    for (const command of [['events', 'list'], ['audit']]) {
      expect(await runCli([...command, ...args], { env })).toEqual({ code: 2, stdout: '', stderr });
    }
  });
});
