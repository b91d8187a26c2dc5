import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { RunningServer } from '../../src/serve/start.js';
import type { RawEvent } from '../../src/store/ports/index.js';
import type { EventRow } from '../../src/store/sqlite/event-rows.js';
import { dbOf } from './sqlite.js';

/** A test server, or its RunningServer: whose store the helpers read and write (either store). */
type HasStore = RunningServer | { server: RunningServer };
const serverOf = (target: HasStore) => ('server' in target ? target.server : target);

/** Stores a gateway of the customer (created at 0, packing, station-1) through the store seam; returns its id. */
export async function insertGateway(target: HasStore, customerId: string, name: string, id: string = randomUUID()): Promise<string> {
  await serverOf(target).ctx.store.gateways.createAll(customerId, [{ id, name, usecase: 'packing', station: 'station-1' }], 0);
  return id;
}

/** Stores another customer (created at 0) with an administrator admin@<id>.example, through the store seam. */
export async function insertCustomer(target: HasStore, id: string): Promise<void> {
  const admin = { id: randomUUID(), customer_id: id, email: `admin@${id}.example`, roles: ['ADMIN_ROLE'], created: 0 };
  const outcome = await serverOf(target).ctx.store.customers.createWithAdmin(id, admin, 0);
  if (outcome !== 'created') throw new Error(`customer ${id}: ${outcome}`);
}

/** Stores events of the customer as they are, through the store seam (an event already stored is skipped); returns how many. */
export function insertEvents(target: HasStore, customerId: string, rows: EventRow[]): Promise<number> {
  return serverOf(target).ctx.store.events.insert(customerId, rows);
}

/** Every stored event of the customer, oldest first (then by id), through the store seam: works on either store. */
export async function storedEvents(target: HasStore, customerId: string): Promise<RawEvent[]> {
  return serverOf(target).ctx.store.events.oldestAfter(customerId, { created: Number.MIN_SAFE_INTEGER, id: '' }, Number.MAX_SAFE_INTEGER, 1_000_000);
}

/**
 * Rows of a portable query (the same text in both dialects; `?` placeholders) on the test server's
 * database, whichever store it runs on: for what the seam does not answer (counts, raw columns;
 * an UPDATE answers no rows).
 * PostgreSQL's bigint comes back as a number, as SQLite's integers do.
 */
export async function selectRows(target: HasStore, sql: string, ...params: unknown[]): Promise<Record<string, unknown>[]> {
  const { store } = serverOf(target).ctx;
  if (store.locator.kind === 'sqlite') {
    const statement = dbOf(serverOf(target)).prepare(sql);
    if (!statement.reader) {
      statement.run(...params);
      return [];
    }
    return statement.all(...params) as Record<string, unknown>[];
  }
  let n = 0;
  const client = new pg.Client({
    connectionString: store.locator.url,
    types: { getTypeParser: ((oid: number, format?: string) => (oid === 20 ? Number : pg.types.getTypeParser(oid, format as 'text'))) as typeof pg.types.getTypeParser },
  });
  await client.connect();
  try {
    return (await client.query(sql.replace(/\?/g, () => `$${++n}`), params)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

/** The first column of each row of selectRows. */
export async function selectColumn(target: HasStore, sql: string, ...params: unknown[]): Promise<unknown[]> {
  return (await selectRows(target, sql, ...params)).map((row) => Object.values(row)[0]);
}

/** `SELECT count(*) FROM table [WHERE ...]` on either store. */
export async function countRows(target: HasStore, table: string, where = '', ...params: unknown[]): Promise<number> {
  return Number((await selectColumn(target, `SELECT count(*) AS count FROM ${table}${where ? ` WHERE ${where}` : ''}`, ...params))[0]);
}

/** `SELECT count(*) FROM table` on a connection of its own, for a server whose store is closed. */
export async function countRowsOfClosed(target: HasStore, table: string): Promise<number> {
  const { locator } = serverOf(target).ctx.store;
  if (locator.kind === 'postgres') return countRows(target, table);
  const db = new Database(locator.file, { readonly: true });
  try {
    return Number(db.prepare(`SELECT count(*) FROM ${table}`).pluck().get());
  } finally {
    db.close();
  }
}
