import type { Statement } from 'better-sqlite3';
import type { Db } from './open.js';
import { LIMIT, prepared } from './statements.js';
import type { NewUser, UserRecord } from '../ports.js';
import { toUserRecord, type UserRow } from '../rows.js';

/** Users and their invitations. E-mail addresses are unique per deployment, case-insensitively. */
export class UserStore {
  /** Every authenticated request looks its user up: prepared once (parsing the SQL cost more than running it). */
  private readonly selectById: Statement;

  constructor(private readonly db: Db) {
    this.selectById = db.prepare('SELECT * FROM users WHERE id = ?');
  }

  /** Inserts the user; false when the e-mail is taken. */
  create(user: NewUser): boolean {
    const result = this.db
      .prepare(
        `INSERT INTO users (id, customer_id, email, first_name, last_name, language, roles, password_hash, created, last_updated)
         VALUES (@id, @customer_id, @email, @first_name, @last_name, @language, @roles, @password_hash, @created, @created)
         ON CONFLICT (email) DO NOTHING`,
      )
      .run({
        first_name: null,
        last_name: null,
        language: null,
        password_hash: null,
        ...user,
        roles: JSON.stringify(user.roles),
      });
    return result.changes === 1;
  }

  byId(id: string): UserRecord | undefined {
    const row = this.selectById.get(id) as UserRow | undefined;
    return row && toUserRecord(row);
  }

  byEmail(email: string): UserRecord | undefined {
    const row = this.db.prepare('SELECT * FROM users WHERE email = ?').get(email) as UserRow | undefined;
    return row && toUserRecord(row);
  }

  /** One page of a customer's users in (created, id) order, after the given key. */
  page(customerId: string, after: { created: number; id: string } | null, limit: number): UserRecord[] {
    const rows = prepared(
      this.db,
      `SELECT * FROM users WHERE customer_id = @customerId AND (created, id) > (@created, @id)
       ORDER BY created, id ${LIMIT}`,
    ).all({ customerId, created: after?.created ?? -1, id: after?.id ?? '', limit }) as UserRow[];
    return rows.map(toUserRecord);
  }

  /**
   * Deletes the user unless that would leave the customer without an admin.
   * Returns 'deleted', 'missing' or 'last-admin'; the check and the delete are one transaction.
   */
  delete(customerId: string, id: string): 'deleted' | 'missing' | 'last-admin' {
    return this.db
      .transaction(() => {
        const user = this.db.prepare('SELECT roles FROM users WHERE id = ? AND customer_id = ?').get(id, customerId) as
          | { roles: string }
          | undefined;
        if (!user) return 'missing' as const;
        if ((JSON.parse(user.roles) as string[]).includes('ADMIN_ROLE')) {
          const admins = this.db
            .prepare(
              `SELECT count(*) FROM users, json_each(users.roles)
               WHERE customer_id = ? AND json_each.value = 'ADMIN_ROLE'`,
            )
            .pluck()
            .get(customerId) as number;
          if (admins <= 1) return 'last-admin' as const;
        }
        this.db.prepare('DELETE FROM users WHERE id = ?').run(id);
        return 'deleted' as const;
      })
      .immediate();
  }

  setPassword(id: string, passwordHash: string, now: number): void {
    this.db.prepare('UPDATE users SET password_hash = ?, last_updated = ? WHERE id = ?').run(passwordHash, now, id);
  }

  createInvitation(tokenHash: string, userId: string, now: number, expiresAt: number): void {
    this.db
      .prepare('INSERT INTO invitations (token_hash, user_id, created, expires_at) VALUES (?, ?, ?, ?)')
      .run(tokenHash, userId, now, expiresAt);
  }

  /**
   * Marks the invitation used and sets the password, atomically; the user id, or undefined
   * when the token is unknown, used or expired.
   */
  redeemInvitation(tokenHash: string, passwordHash: string, now: number): string | undefined {
    return this.db
      .transaction(() => {
        const invitation = this.db
          .prepare(
            `UPDATE invitations SET used_at = @now
             WHERE token_hash = @tokenHash AND used_at IS NULL AND expires_at > @now RETURNING user_id`,
          )
          .get({ tokenHash, now }) as { user_id: string } | undefined;
        if (!invitation) return undefined;
        this.setPassword(invitation.user_id, passwordHash, now);
        return invitation.user_id;
      })
      .immediate();
  }
}
