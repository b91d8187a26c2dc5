import type { Statement } from 'better-sqlite3';
import type { Db } from './open.js';

const cache = new WeakMap<Db, Map<string, Statement>>();

/**
 * The connection's prepared statement for `sql`, compiled once. Compiling costs about as much as
 * running a small statement, and provisioning runs about ten per gateway on the main thread.
 */
export function prepared(db: Db, sql: string): Statement {
  let statements = cache.get(db);
  if (!statements) cache.set(db, (statements = new Map()));
  let statement = statements.get(sql);
  if (!statement) statements.set(sql, (statement = db.prepare(sql)));
  return statement;
}

/**
 * The LIMIT of a keyset read, a bound parameter that SQLite does not read while planning. SQLite
 * (3.53; sqlite3ExprIsInteger) reads a bare `LIMIT @limit` for the planner and prepares the
 * statement again whenever that parameter is bound, i.e. on every read, which cost more than
 * reading a small page (bench/README.md "events"). Every read that uses it walks one index range in
 * order, so its plan does not depend on the limit (test/server/routes/events.test.ts checks the events').
 */
export const LIMIT = 'LIMIT CAST(@limit AS INTEGER)';
