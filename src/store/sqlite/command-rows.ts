import type { CommandRecord } from '../../domain/commands.js';
import type { Db } from './open.js';
import { prepared } from './statements.js';

// The writes of delivery return every command they change, several rows per command, on the
// writer thread that ingest waits on. A row read as an array and made into a record by one object
// literal costs about half of what better-sqlite3's row object does (a property set per column).

const COLUMNS = ['seq', 'id', 'customer_id', 'gateway_id', 'device_id', 'name', 'parameters', 'status', 'created', 'last_updated', 'expires_at', 'delivered_at', 'completed_at', 'details', 'attempts'] as const;

/** The select (or RETURNING) list of a command record's columns: read with `.raw()`, then `commandRecords`. */
export const COMMAND_COLUMNS = COLUMNS.join(', ');
/** The same, each column named `commands.<column>` (a statement that reads another table too). */
export const COMMANDS_COLUMNS = COLUMNS.map((c) => `commands.${c}`).join(', ');

/** The record of a row read raw, its first columns those of `COMMAND_COLUMNS` (any after them left out). */
export function commandRecord(r: unknown[]): CommandRecord {
  return {
    seq: r[0] as number,
    id: r[1] as string,
    customer_id: r[2] as string,
    gateway_id: r[3] as string,
    device_id: r[4] as string | null,
    name: r[5] as string,
    parameters: r[6] as string,
    status: r[7] as CommandRecord['status'],
    created: r[8] as number,
    last_updated: r[9] as number,
    expires_at: r[10] as number,
    delivered_at: r[11] as number | null,
    completed_at: r[12] as number | null,
    details: r[13] as string | null,
    attempts: r[14] as number,
  };
}

/** The records of rows read raw in the order of `COMMAND_COLUMNS`. */
export const commandRecords = (rows: unknown[][]): CommandRecord[] => rows.map(commandRecord);

/** The customer's command of that id (ids are stored in lower case). */
export function commandById(db: Db, customerId: string, id: string): CommandRecord | undefined {
  const row = prepared(db, `SELECT ${COMMAND_COLUMNS} FROM commands WHERE id = ? AND customer_id = ?`).raw().get(id.toLowerCase(), customerId) as unknown[] | undefined;
  return row && commandRecord(row);
}
