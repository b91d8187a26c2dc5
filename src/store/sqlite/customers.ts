import type { AuditEntry } from '../../domain/audit.js';
import type { CustomerRepository, NewUser } from '../ports/index.js';
import { audited } from './audit.js';
import type { Db } from './open.js';
import { insertUser } from './users.js';

/** Thrown inside a transaction to undo it when the e-mail of a new administrator is taken. */
class EmailTaken extends Error {}

/** Inserts the customer; false when it already exists. */
export function insertCustomer(db: Db, id: string, now: number): boolean {
  return db.prepare('INSERT OR IGNORE INTO customers (id, created) VALUES (?, ?)').run(id, now).changes === 1;
}

/** Customers: the tenants of a deployment. */
export class SqliteCustomers implements CustomerRepository {
  constructor(private readonly db: Db) {}

  async exists(id: string): Promise<boolean> {
    return this.db.prepare('SELECT 1 FROM customers WHERE id = ?').get(id) !== undefined;
  }

  async count(): Promise<number> {
    return this.countNow();
  }

  async createWithAdmin(id: string, admin: NewUser, now: number, audit?: AuditEntry): Promise<'created' | 'customer-exists' | 'email-taken'> {
    try {
      return audited(this.db, () => this.createNow(id, admin, now), (outcome) => (outcome === 'created' ? audit : undefined));
    } catch (error) {
      if (error instanceof EmailTaken) return 'email-taken';
      throw error;
    }
  }

  async bootstrap(id: string, admin: NewUser, now: number, audit?: AuditEntry): Promise<boolean> {
    return audited(
      this.db,
      () => {
        if (this.countNow() > 0) return false;
        if (this.createNow(id, admin, now) !== 'created') throw new Error(`customer "${id}" could not be created on an empty deployment`);
        return true;
      },
      (created) => (created ? audit : undefined),
    );
  }

  private countNow(): number {
    return this.db.prepare('SELECT count(*) FROM customers').pluck().get() as number;
  }

  /** The customer and its administrator, inside a transaction; EmailTaken undoes it. */
  private createNow(id: string, admin: NewUser, now: number): 'created' | 'customer-exists' {
    if (!insertCustomer(this.db, id, now)) return 'customer-exists';
    if (!insertUser(this.db, admin)) throw new EmailTaken();
    return 'created';
  }
}
