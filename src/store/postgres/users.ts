import type { AuditEntry } from '../../domain/audit.js';
import { sameRoles } from '../../domain/permissions.js';
import type { AuditOf, InvitationKind, InvitationOutcome, NewInvitation, NewUser, Redeemed, UserChanges, UserRecord, UserRepository, UserUpdate } from '../ports/index.js';
import { audited, insertAuditEntry } from './audit.js';
import { toUserRecord, type UserRow } from '../shared/rows.js';
import type { Database, Queryable } from './pool.js';

const USER_COLUMNS = `id, customer_id, email, first_name, last_name, language, roles, password_hash,
  consent_general_terms, consent_privacy_policy, created, last_updated, session_version`;

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

/**
 * Users and their invitations. E-mail addresses are unique per deployment, case-insensitively as
 * SQLite's NOCASE: lower() in the C collation (the column's) folds ASCII letters only, and a
 * looked-up address is lowered in that collation too, whatever the database's locale (in a UTF-8
 * one, lower('İ') is 'i': "admİn@..." would find "admin@...", as SQLite does not).
 */
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
    const row = (await this.db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users WHERE lower(email) = lower($1 COLLATE "C")`, [email])).rows[0];
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
      const user = await lockedUser(client, customerId, id);
      if (!user) return 'missing' as const;
      if (user.roles.includes('ADMIN_ROLE') && (await admins(client, customerId)) <= 1) return 'last-admin' as const;
      await client.query('DELETE FROM users WHERE id = $1', [id]);
      return 'deleted' as const;
    }, (outcome) => (outcome === 'deleted' ? audit : undefined));
  }

  /** Under the customer's row lock, as delete: a demotion and a deletion cannot both remove "one of two" admins. */
  async update(customerId: string, id: string, changes: UserChanges, now: number, audit?: AuditOf<UserUpdate>): Promise<UserRecord | 'missing' | 'last-admin'> {
    const outcome = await audited(this.db, async (client): Promise<UserUpdate | 'missing' | 'last-admin'> => {
      const before = await lockedUser(client, customerId, id);
      if (!before) return 'missing';
      const roles = changes.roles ?? before.roles;
      if (before.roles.includes('ADMIN_ROLE') && !roles.includes('ADMIN_ROLE') && (await admins(client, customerId)) <= 1) return 'last-admin';
      const { rows } = await client.query<UserRow>(
        `UPDATE users SET first_name = $2, last_name = $3, language = $4, roles = $5, session_version = session_version + $6, last_updated = $7
         WHERE id = $1 RETURNING ${USER_COLUMNS}`,
        [id, changes.first_name ?? before.first_name, changes.last_name ?? before.last_name, changes.language ?? before.language,
          JSON.stringify(roles), sameRoles(roles, before.roles) ? 0 : 1, now],
      );
      return { before, after: toUserRecord(rows[0]!) };
    }, (done) => (typeof done === 'object' && audit ? audit(done) : undefined));
    return typeof outcome === 'object' ? outcome.after : outcome;
  }

  setPassword(id: string, passwordHash: string, now: number, audit?: AuditEntry): Promise<void> {
    return this.db.transaction(async (client) => {
      await setPasswordOn(client, id, passwordHash, now);
      if (audit) await insertAuditEntry(client, audit);
    });
  }

  async upgradePasswordHash(id: string, previous: string, upgraded: string): Promise<boolean> {
    return (await this.db.query('UPDATE users SET password_hash = $1 WHERE id = $2 AND password_hash = $3', [upgraded, id, previous])).rowCount === 1;
  }

  /** The user's row is locked: of two issues racing, the second voids the first's token. */
  issueInvitation(invitation: NewInvitation, audit?: AuditEntry): Promise<InvitationOutcome> {
    return audited(this.db, async (client): Promise<InvitationOutcome> => {
      const user = await lockedUser(client, invitation.customerId, invitation.userId, 'user');
      if (!user) return 'missing';
      if (invitation.kind === 'invitation' && user.password_hash !== null) return 'has-password';
      if (invitation.kind === 'password-reset' && user.password_hash === null) return 'no-password';
      await client.query('DELETE FROM invitations WHERE user_id = $1 AND used_at IS NULL', [user.id]);
      await client.query('INSERT INTO invitations (token_hash, user_id, kind, created, expires_at) VALUES ($1, $2, $3, $4, $5)', [
        invitation.tokenHash, user.id, invitation.kind, invitation.created, invitation.expiresAt,
      ]);
      return 'issued';
    }, (outcome) => (outcome === 'issued' ? audit : undefined));
  }

  /** Marks the invitation used and sets the password in one transaction; of two redemptions one wins. */
  redeemInvitation(tokenHash: string, passwordHash: string, now: number, audit?: AuditOf<Redeemed>): Promise<string | undefined> {
    return this.db.transaction(async (client) => {
      const invitation = (
        await client.query<{ user_id: string; kind: InvitationKind }>(
          `UPDATE invitations SET used_at = $2
           WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING user_id, kind`,
          [tokenHash, now],
        )
      ).rows[0];
      if (!invitation) return undefined;
      const user = await setPasswordOn(client, invitation.user_id, passwordHash, now);
      if (audit) await insertAuditEntry(client, audit({ user, kind: invitation.kind }));
      return invitation.user_id;
    });
  }
}

/**
 * The customer's user, with a row lock: the customer's row (`lock` 'customer', for changes that
 * count its administrators) or the user's own.
 */
async function lockedUser(client: Queryable, customerId: string, id: string, lock: 'customer' | 'user' = 'customer'): Promise<UserRecord | undefined> {
  if (lock === 'customer') await client.query('SELECT 1 FROM customers WHERE id = $1 FOR UPDATE', [customerId]);
  const sql = `SELECT ${USER_COLUMNS} FROM users WHERE id = $1 AND customer_id = $2${lock === 'user' ? ' FOR UPDATE' : ''}`;
  const row = (await client.query<UserRow>(sql, [id, customerId])).rows[0];
  return row && toUserRecord(row);
}

/** How many ADMIN_ROLE users the customer has. */
async function admins(client: Queryable, customerId: string): Promise<number> {
  const { rows } = await client.query<{ admins: number }>(
    `SELECT count(*) AS admins FROM users, jsonb_array_elements_text(users.roles::jsonb) AS role
     WHERE customer_id = $1 AND role = 'ADMIN_ROLE'`,
    [customerId],
  );
  return rows[0]!.admins;
}

/** Sets the password, raises the session version and voids the outstanding invitations; the user as it is now. */
async function setPasswordOn(client: Queryable, id: string, passwordHash: string, now: number): Promise<UserRecord> {
  const { rows } = await client.query<UserRow>(
    `UPDATE users SET password_hash = $1, session_version = session_version + 1, last_updated = $2 WHERE id = $3 RETURNING ${USER_COLUMNS}`,
    [passwordHash, now, id],
  );
  await client.query('DELETE FROM invitations WHERE user_id = $1 AND used_at IS NULL', [id]);
  return toUserRecord(rows[0]!);
}
