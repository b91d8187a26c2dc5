import type { Statement } from 'better-sqlite3';
import { sameRoles } from '../../domain/permissions.js';
import type { Db } from './open.js';
import { LIMIT, prepared } from './statements.js';
import type { InvitationKind, InvitationOutcome, NewInvitation, NewUser, UserChanges, UserRecord, UserUpdate } from '../ports/index.js';
import { toUserRecord, type UserRow } from '../shared/rows.js';

/**
 * Users and their invitations. E-mail addresses are unique per deployment, case-insensitively
 * (the column's NOCASE: ASCII letters only, as domain/lockout.ts normalisedEmail).
 */
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
   * Returns 'deleted', 'missing' or 'last-admin'; the caller runs it in an IMMEDIATE transaction.
   */
  delete(customerId: string, id: string): 'deleted' | 'missing' | 'last-admin' {
    const user = this.ofCustomer(customerId, id);
    if (!user) return 'missing';
    if (user.roles.includes('ADMIN_ROLE') && this.admins(customerId) <= 1) return 'last-admin';
    this.db.prepare('DELETE FROM users WHERE id = ?').run(id);
    return 'deleted';
  }

  /** Changes the user; a change of roles raises the session version. The caller runs it in an IMMEDIATE transaction. */
  update(customerId: string, id: string, changes: UserChanges, now: number): UserUpdate | 'missing' | 'last-admin' {
    const before = this.ofCustomer(customerId, id);
    if (!before) return 'missing';
    const roles = changes.roles ?? before.roles;
    if (before.roles.includes('ADMIN_ROLE') && !roles.includes('ADMIN_ROLE') && this.admins(customerId) <= 1) return 'last-admin';
    const rolesChanged = !sameRoles(roles, before.roles);
    this.db
      .prepare(
        `UPDATE users SET first_name = @first_name, last_name = @last_name, language = @language, roles = @roles,
           session_version = session_version + @raise, last_updated = @now WHERE id = @id`,
      )
      .run({
        first_name: changes.first_name ?? before.first_name,
        last_name: changes.last_name ?? before.last_name,
        language: changes.language ?? before.language,
        roles: JSON.stringify(roles),
        raise: rolesChanged ? 1 : 0,
        now,
        id,
      });
    return { before, after: this.byId(id)! };
  }

  setPassword(id: string, passwordHash: string, now: number): void {
    this.db
      .prepare('UPDATE users SET password_hash = ?, session_version = session_version + 1, last_updated = ? WHERE id = ?')
      .run(passwordHash, now, id);
    this.db.prepare('DELETE FROM invitations WHERE user_id = ? AND used_at IS NULL').run(id);
  }

  upgradePasswordHash(id: string, previous: string, upgraded: string): boolean {
    return this.db.prepare('UPDATE users SET password_hash = ? WHERE id = ? AND password_hash = ?').run(upgraded, id, previous).changes === 1;
  }

  /** Voids the user's outstanding tokens and stores the new one; the caller runs it in an IMMEDIATE transaction. */
  issueInvitation(invitation: NewInvitation): InvitationOutcome {
    const user = this.ofCustomer(invitation.customerId, invitation.userId);
    if (!user) return 'missing';
    if (invitation.kind === 'invitation' && user.password_hash !== null) return 'has-password';
    if (invitation.kind === 'password-reset' && user.password_hash === null) return 'no-password';
    this.db.prepare('DELETE FROM invitations WHERE user_id = ? AND used_at IS NULL').run(user.id);
    this.db
      .prepare('INSERT INTO invitations (token_hash, user_id, kind, created, expires_at) VALUES (?, ?, ?, ?, ?)')
      .run(invitation.tokenHash, user.id, invitation.kind, invitation.created, invitation.expiresAt);
    return 'issued';
  }

  /**
   * Marks the invitation used and sets the password (voiding the user's other invitations); the
   * user id and the token's kind, or undefined when the token is unknown, used or expired. The
   * caller runs it in an IMMEDIATE transaction.
   */
  redeemInvitation(tokenHash: string, passwordHash: string, now: number): { userId: string; kind: InvitationKind } | undefined {
    const invitation = this.db
      .prepare(
        `UPDATE invitations SET used_at = @now
         WHERE token_hash = @tokenHash AND used_at IS NULL AND expires_at > @now RETURNING user_id, kind`,
      )
      .get({ tokenHash, now }) as { user_id: string; kind: InvitationKind } | undefined;
    if (!invitation) return undefined;
    this.setPassword(invitation.user_id, passwordHash, now);
    return { userId: invitation.user_id, kind: invitation.kind };
  }

  private ofCustomer(customerId: string, id: string): UserRecord | undefined {
    const user = this.byId(id);
    return user?.customer_id === customerId ? user : undefined;
  }

  /** How many ADMIN_ROLE users the customer has. */
  private admins(customerId: string): number {
    return this.db
      .prepare(`SELECT count(*) FROM users, json_each(users.roles) WHERE customer_id = ? AND json_each.value = 'ADMIN_ROLE'`)
      .pluck()
      .get(customerId) as number;
  }
}
