import type { Db } from './open.js';

/** Customers: the tenants of a deployment. */
export class CustomerStore {
  constructor(private readonly db: Db) {}

  exists(id: string): boolean {
    return this.db.prepare('SELECT 1 FROM customers WHERE id = ?').get(id) !== undefined;
  }

  /** Creates the customer; false when it already exists. */
  create(id: string, now: number): boolean {
    return this.db.prepare('INSERT OR IGNORE INTO customers (id, created) VALUES (?, ?)').run(id, now).changes === 1;
  }

  count(): number {
    return this.db.prepare('SELECT count(*) FROM customers').pluck().get() as number;
  }
}
