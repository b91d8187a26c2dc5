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
 * The LIMIT of a keyset read, a bound parameter that SQLite does not read while planning. A bare
 * `LIMIT @limit` is: SQLite (3.53 here; sqlite3ExprIsInteger) reads its bound value for the
 * planner and marks the statement to be prepared again whenever that parameter is bound, i.e. on
 * every read: about 0.4 M instructions (40 µs), more than reading a 10-event page. Every read
 * that uses it walks one index range in order, so its plan does not depend on the limit
 * (test/events-list.test.ts checks the events').
 */
export const LIMIT = 'LIMIT CAST(@limit AS INTEGER)';
