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
