import type { ApiEvent } from '../../client/events.js';
import { csvRecord, type CellMode } from '../../domain/csv.js';
import { EVENT_COLUMNS } from '../../domain/events.js';
import { gatewayLabel } from '../gateway-refs.js';
import { formatTime, printList, type Column, type Io } from '../io.js';

/** The columns of event tables and tab-separated rows. */
export const eventColumns = (io: Io, names: ReadonlyMap<string, string>): Column<ApiEvent>[] => [
  { header: 'CREATED', value: (e) => formatTime(io, e.created) },
  { header: 'TYPE', value: (e) => e.type },
  { header: 'GATEWAY', value: (e) => gatewayLabel(e.gateway_id === undefined ? null : String(e.gateway_id), names) },
  { header: 'DEVICE', value: (e) => e.device_id },
  { header: 'SCAN CODE', value: (e) => e.scan_code },
  { header: 'ID', value: (e) => e.id },
];

/**
 * Prints events page by page as they arrive: `--json` one array (the API items), `--csv` the
 * export format (text cells as `cells` says), a pipe tab-separated rows, a TTY one table at the end.
 */
export class EventPrinter {
  private count = 0;
  private readonly table: ApiEvent[] = [];
  /** The last JSON item printed so far: its comma depends on whether another follows. */
  private held: string | undefined;

  constructor(
    private readonly io: Io,
    private readonly format: 'json' | 'csv' | 'text',
    private readonly cells: CellMode = 'safe',
    /** Gateway names by id, for the GATEWAY column (text only). */
    private readonly names: ReadonlyMap<string, string> = new Map(),
  ) {
    if (format === 'csv') io.out(csvRecord(EVENT_COLUMNS));
  }

  page(events: readonly ApiEvent[]): void {
    if (events.length === 0) return;
    if (this.format === 'json') {
      // The same text as JSON.stringify(allEvents, null, 2), written a page at a time.
      const lines = this.held === undefined ? ['['] : [this.held + ','];
      const items = events.map((e) => JSON.stringify(e, null, 2).replace(/^/gm, '  '));
      this.held = items.pop();
      this.io.out([...lines, ...items.map((item) => item + ',')].join('\n'));
    } else if (this.format === 'csv') {
      this.io.out(events.map((e) => csvRecord(EVENT_COLUMNS.map((c) => e[c]), this.cells)).join(''));
    } else if (this.io.tty) {
      this.table.push(...events);
    } else {
      printList(this.io, [...events], eventColumns(this.io, this.names));
    }
    this.count += events.length;
  }

  /** Closes the JSON array or prints the table; returns how many events were printed. */
  end(): number {
    if (this.format === 'json') this.io.out(this.held === undefined ? '[]' : `${this.held}\n]`);
    if (this.format === 'text' && this.io.tty) printList(this.io, this.table, eventColumns(this.io, this.names));
    return this.count;
  }
}
