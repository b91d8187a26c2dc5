import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fitColumns, printList, type Io } from '../../src/cli/io.js';
import { adminEnv, runOnTerminal } from '../helpers/cli.js';
import { CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';

/** An Io that records what a command prints. */
function recordingIo(overrides: Partial<Io>): Io & { printed: string[] } {
  const printed: string[] = [];
  return { out: (text) => printed.push(text), err: (text) => printed.push(`stderr: ${text}`), tty: false, interactive: false, color: false, json: false, debug: false, printed, ...overrides };
}

const items = [
  { id: 'a1', size: 3 },
  { id: 'b22', size: null },
];
const columns = [
  { header: 'ID', value: (item: (typeof items)[number]) => item.id },
  { header: 'SIZE', value: (item: (typeof items)[number]) => item.size },
];

describe('printList', () => {
  it('draws a table on a TTY with one line per row and a rule under the header only', () => {
    const io = recordingIo({ tty: true });
    printList(io, items, columns);
    expect(io.printed).toEqual([
      ['┌─────┬──────┐', '│ ID  │ SIZE │', '├─────┼──────┤', '│ a1  │ 3    │', '│ b22 │      │', '└─────┴──────┘'].join('\n'),
    ]);
  });

  it('prints tab-separated rows to a pipe, the API objects with --json, and says so when there is nothing', () => {
    const piped = recordingIo({});
    printList(piped, items, columns);
    expect(piped.printed).toEqual(['a1\t3\nb22\t']);
    const json = recordingIo({ json: true });
    printList(json, items, columns);
    expect(json.printed).toEqual([JSON.stringify(items, null, 2)]);
    const empty = recordingIo({ tty: true });
    printList(empty, [], columns);
    expect(empty.printed).toEqual(['stderr: No results.']);
  });
});

describe('tables fit the terminal', () => {
  it('fitColumns shares the cut among the widest columns, never below 6', () => {
    expect(fitColumns([36, 15, 4, 10, 23], 200)).toEqual([36, 15, 4, 10, 23]);
    expect(fitColumns([36, 15, 4, 10, 23], 60)).toEqual([10, 10, 4, 10, 10]);
    expect(fitColumns([36, 15, 4, 10, 23], 20)).toEqual([6, 6, 4, 6, 6]);
  });

  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
    for (const name of ['dock-1 at the north gate of the warehouse', 'dock-2 at the south gate of the warehouse']) {
      await t.admin.post(`/${CUSTOMER}/gateways`, { name, usecase: 'inbound', station: 'station with a long name too' });
    }
  });
  afterAll(() => t.close());

  /** `scanhub gateways list` on a terminal COLUMNS wide: the lines of its table. */
  async function tableOn(columns: number): Promise<string[]> {
    const terminal = runOnTerminal(['gateways', 'list'], { ...adminEnv(t), COLUMNS: String(columns) });
    expect(await terminal.exited).toBe(0);
    return terminal.output().split('\r\n').filter((line) => line.startsWith('│') || line.startsWith('┌'));
  }

  it('gateways list on a narrow terminal cuts cells short with … and stays one line per row', async () => {
    const lines = await tableOn(80);
    expect(lines).toHaveLength(4);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    expect(lines[2]).toContain('…');
    const wide = await tableOn(250);
    expect(wide[2]).toContain('dock-1 at the north gate of the warehouse');
  });
});
