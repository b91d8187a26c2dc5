import type { AuditEntry } from '../../domain/audit.js';
import type { AuditOf, CustomerRepository, NewUser, UserRecord, UserRepository } from '../ports.js';
import { audited, insertAuditEntry } from './audit.js';
import { toUserRecord, type UserRow } from '../rows.js';
import type { Database, Queryable } from './pool.js';
import { ADVISORY_LOCKS } from './locks.js';

const USER_COLUMNS = `id, customer_id, email, first_name, last_name, language, roles, password_hash,
  consent_general_terms, consent_privacy_policy, created, last_updated`;

/** Inserts the user; false when the e-mail is taken (case-insensitively: the unique index on lower(email)). */
export async function insertUser(client: Queryable, user: NewUser): Promise<boolean> {
  const result = await client.query(
    `INSERT INTO users (id, customer_id, email, first_name, last_name, language, roles, password_hash, created, last_updated)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
     ON CONFLICT ((lower(email))) DO NOTHING`,
    [user.id, user.customer_id, user.email, user.first_name ?? null, user.last_name ?? null, user.language ?? null,
      JSON.stringify(user.roles), user.password_hash ?? null, user.created],
  );
  return result.rowCount === 1;
}

/** Users and their invitations. E-mail addresses are unique per deployment, case-insensitively (ASCII, as SQLite's NOCASE). */
export class PgUsers implements UserRepository {
  constructor(private readonly db: Database) {}

  create(user: NewUser, audit?: AuditEntry): Promise<boolean> {
    return audited(this.db, (client) => insertUser(client, user), (created) => (created ? audit : undefined));
  }

  async byId(id: string): Promise<UserRecord | undefined> {
    const row = (await this.db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1`, [id])).rows[0];
    return row && toUserRecord(row);
  }

  async byEmail(email: string): Promise<UserRecord | undefined> {
    const row = (await this.db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users WHERE lower(email) = lower($1)`, [email])).rows[0];
    return row && toUserRecord(row);
  }

  async page(customerId: string, after: { created: number; id: string } | null, limit: number): Promise<UserRecord[]> {
    const { rows } = await this.db.query<UserRow>(
      `SELECT ${USER_COLUMNS} FROM users WHERE customer_id = $1 AND (created, id) > ($2, $3)
       ORDER BY created, id LIMIT $4`,
      [customerId, after?.created ?? -1, after?.id ?? '', limit],
    );
    return rows.map(toUserRecord);
  }

  /** The customer's row is locked first, so two deletions cannot both remove "one of two" admins. */
  delete(customerId: string, id: string, audit?: AuditEntry): Promise<'deleted' | 'missing' | 'last-admin'> {
    return audited(this.db, async (client) => {
      await client.query('SELECT 1 FROM customers WHERE id = $1 FOR UPDATE', [customerId]);
      const user = (await client.query<{ roles: string }>('SELECT roles FROM users WHERE id = $1 AND customer_id = $2', [id, customerId])).rows[0];
      if (!user) return 'missing' as const;
      if ((JSON.parse(user.roles) as string[]).includes('ADMIN_ROLE')) {
        const admins = (
          await client.query<{ admins: number }>(
            `SELECT count(*) AS admins FROM users, jsonb_array_elements_text(users.roles::jsonb) AS role
             WHERE customer_id = $1 AND role = 'ADMIN_ROLE'`,
            [customerId],
          )
        ).rows[0]!.admins;
        if (admins <= 1) return 'last-admin' as const;
      }
      await client.query('DELETE FROM users WHERE id = $1', [id]);
      return 'deleted' as const;
    }, (outcome) => (outcome === 'deleted' ? audit : undefined));
  }

  async setPassword(id: string, passwordHash: string, now: number): Promise<void> {
    await this.db.query('UPDATE users SET password_hash = $1, last_updated = $2 WHERE id = $3', [passwordHash, now, id]);
  }

  async createInvitation(tokenHash: string, userId: string, now: number, expiresAt: number, audit?: AuditEntry): Promise<void> {
    await audited(
      this.db,
      (client) => client.query('INSERT INTO invitations (token_hash, user_id, created, expires_at) VALUES ($1, $2, $3, $4)', [tokenHash, userId, now, expiresAt]),
      () => audit,
    );
  }

  /** Marks the invitation used and sets the password in one transaction; of two redemptions one wins. */
  redeemInvitation(tokenHash: string, passwordHash: string, now: number, audit?: AuditOf<UserRecord>): Promise<string | undefined> {
    return this.db.transaction(async (client) => {
      const invitation = (
        await client.query<{ user_id: string }>(
          `UPDATE invitations SET used_at = $2
           WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING user_id`,
          [tokenHash, now],
        )
      ).rows[0];
      if (!invitation) return undefined;
      const user = (
        await client.query<UserRow>(`UPDATE users SET password_hash = $1, last_updated = $2 WHERE id = $3 RETURNING ${USER_COLUMNS}`, [passwordHash, now, invitation.user_id])
      ).rows[0]!;
      if (audit) await insertAuditEntry(client, audit(toUserRecord(user)));
      return invitation.user_id;
    });
  }
}

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
