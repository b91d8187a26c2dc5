import { describe, expect, it } from 'vitest';
import { printList, type Io } from '../../src/cli/io.js';

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
