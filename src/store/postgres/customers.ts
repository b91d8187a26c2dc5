import type { AuditEntry } from '../../domain/audit.js';
import type { CustomerRepository, NewUser } from '../ports/index.js';
import { insertAuditEntry } from './audit.js';
import { ADVISORY_LOCKS } from './locks.js';
import type { Database, Queryable } from './pool.js';
import { insertUser } from './users.js';

/** Customers: the tenants of a deployment. */
export class PgCustomers implements CustomerRepository {
  constructor(private readonly db: Database) {}

  async exists(id: string): Promise<boolean> {
    return (await this.db.query('SELECT 1 FROM customers WHERE id = $1', [id])).rowCount === 1;
  }

  async count(): Promise<number> {
    return (await this.db.query<{ count: number }>('SELECT count(*) AS count FROM customers')).rows[0]!.count;
  }

  createWithAdmin(id: string, admin: NewUser, now: number, audit?: AuditEntry): Promise<'created' | 'customer-exists' | 'email-taken'> {
    return this.db
      .transaction(async (client) => {
        const outcome = await createCustomer(client, id, admin, now);
        if (outcome !== 'created') throw new Refused(outcome);
        if (audit) await insertAuditEntry(client, audit);
        return outcome;
      })
      .catch((error: unknown) => {
        if (error instanceof Refused) return error.outcome;
        throw error;
      });
  }

  /** Under a transaction-level advisory lock: of two bootstraps racing on an empty deployment, one creates. */
  bootstrap(id: string, admin: NewUser, now: number, audit?: AuditEntry): Promise<boolean> {
    return this.db
      .transaction(async (client) => {
        await client.query('SELECT pg_advisory_xact_lock($1)', [BOOTSTRAP_LOCK]);
        if ((await client.query('SELECT 1 FROM customers LIMIT 1')).rowCount !== 0) return false;
        const outcome = await createCustomer(client, id, admin, now);
        if (outcome !== 'created') throw new Refused(outcome);
        if (audit) await insertAuditEntry(client, audit);
        return true;
      })
      .catch((error: unknown) => {
        if (error instanceof Refused) return false;
        throw error;
      });
  }
}

const BOOTSTRAP_LOCK = ADVISORY_LOCKS.bootstrap;

class Refused extends Error {
  constructor(readonly outcome: 'customer-exists' | 'email-taken') {
    super(outcome);
  }
}

async function createCustomer(client: Queryable, id: string, admin: NewUser, now: number): Promise<'created' | 'customer-exists' | 'email-taken'> {
  const created = await client.query('INSERT INTO customers (id, created) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', [id, now]);
  if (created.rowCount !== 1) return 'customer-exists';
  return (await insertUser(client, { ...admin, customer_id: id })) ? 'created' : 'email-taken';
}
