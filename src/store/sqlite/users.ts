import type { Statement } from 'better-sqlite3';
import type { AuditEntry } from '../../domain/audit.js';
import { sameRoles } from '../../domain/permissions.js';
import type {
  AuditOf,
  InvitationKind,
  InvitationOutcome,
  NewInvitation,
  NewUser,
  Redeemed,
  UserChanges,
  UserRecord,
  UserRepository,
  UserUpdate,
} from '../ports/index.js';
import { toUserRecord, type UserRow } from '../shared/rows.js';
import { audited } from './audit.js';
import type { Db } from './open.js';
import { LIMIT, prepared } from './statements.js';

/** Inserts the user; false when the e-mail is taken. */
export function insertUser(db: Db, user: NewUser): boolean {
  const result = db
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

/**
 * Users and their invitations. E-mail addresses are unique per deployment, case-insensitively
 * (the column's NOCASE: ASCII letters only, as domain/lockout.ts normalisedEmail).
 */
export class SqliteUsers implements UserRepository {
  /** Every authenticated request looks its user up: prepared once (parsing the SQL cost more than running it). */
  private readonly selectById: Statement;

  constructor(private readonly db: Db) {
    this.selectById = db.prepare('SELECT * FROM users WHERE id = ?');
  }

  async create(user: NewUser, audit?: AuditEntry): Promise<boolean> {
    return audited(this.db, () => insertUser(this.db, user), (created) => (created ? audit : undefined));
  }

  async byId(id: string): Promise<UserRecord | undefined> {
    return this.userById(id);
  }

  async byEmail(email: string): Promise<UserRecord | undefined> {
    const row = this.db.prepare('SELECT * FROM users WHERE email = ?').get(email) as UserRow | undefined;
    return row && toUserRecord(row);
  }

  async page(customerId: string, after: { created: number; id: string } | null, limit: number): Promise<UserRecord[]> {
    const rows = prepared(
      this.db,
      `SELECT * FROM users WHERE customer_id = @customerId AND (created, id) > (@created, @id)
       ORDER BY created, id ${LIMIT}`,
    ).all({ customerId, created: after?.created ?? -1, id: after?.id ?? '', limit }) as UserRow[];
    return rows.map(toUserRecord);
  }

  /** Deletes the user unless that would leave the customer without an admin. */
  async delete(customerId: string, id: string, audit?: AuditEntry): Promise<'deleted' | 'missing' | 'last-admin'> {
    return audited(
      this.db,
      () => {
        const user = this.ofCustomer(customerId, id);
        if (!user) return 'missing';
        if (user.roles.includes('ADMIN_ROLE') && this.admins(customerId) <= 1) return 'last-admin';
        this.db.prepare('DELETE FROM users WHERE id = ?').run(id);
        return 'deleted';
      },
      (outcome) => (outcome === 'deleted' ? audit : undefined),
    );
  }

  async update(customerId: string, id: string, changes: UserChanges, now: number, audit?: AuditOf<UserUpdate>): Promise<UserRecord | 'missing' | 'last-admin'> {
    const outcome = audited(this.db, () => this.change(customerId, id, changes, now), (done) => (typeof done === 'object' && audit ? audit(done) : undefined));
    return typeof outcome === 'object' ? outcome.after : outcome;
  }

  async setPassword(id: string, passwordHash: string, now: number, audit?: AuditEntry): Promise<void> {
    audited(this.db, () => this.setPasswordOf(id, passwordHash, now), () => audit);
  }

  async upgradePasswordHash(id: string, previous: string, upgraded: string): Promise<boolean> {
    return this.db.prepare('UPDATE users SET password_hash = ? WHERE id = ? AND password_hash = ?').run(upgraded, id, previous).changes === 1;
  }

  /** Voids the user's outstanding tokens and stores the new one. */
  async issueInvitation(invitation: NewInvitation, audit?: AuditEntry): Promise<InvitationOutcome> {
    return audited(this.db, () => this.issue(invitation), (outcome) => (outcome === 'issued' ? audit : undefined));
  }

  async redeemInvitation(tokenHash: string, passwordHash: string, now: number, audit?: AuditOf<Redeemed>): Promise<string | undefined> {
    return audited(
      this.db,
      () => this.redeem(tokenHash, passwordHash, now),
      (redeemed) => (redeemed && audit ? audit({ user: this.userById(redeemed.userId)!, kind: redeemed.kind }) : undefined),
    )?.userId;
  }

  private userById(id: string): UserRecord | undefined {
    const row = this.selectById.get(id) as UserRow | undefined;
    return row && toUserRecord(row);
  }

  /** Changes the user; a change of roles raises the session version. Inside the IMMEDIATE transaction of update. */
  private change(customerId: string, id: string, changes: UserChanges, now: number): UserUpdate | 'missing' | 'last-admin' {
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
    return { before, after: this.userById(id)! };
  }

  private setPasswordOf(id: string, passwordHash: string, now: number): void {
    this.db
      .prepare('UPDATE users SET password_hash = ?, session_version = session_version + 1, last_updated = ? WHERE id = ?')
      .run(passwordHash, now, id);
    this.db.prepare('DELETE FROM invitations WHERE user_id = ? AND used_at IS NULL').run(id);
  }

  private issue(invitation: NewInvitation): InvitationOutcome {
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
   * user id and the token's kind, or undefined when the token is unknown, used or expired.
   */
  private redeem(tokenHash: string, passwordHash: string, now: number): { userId: string; kind: InvitationKind } | undefined {
    const invitation = this.db
      .prepare(
        `UPDATE invitations SET used_at = @now
         WHERE token_hash = @tokenHash AND used_at IS NULL AND expires_at > @now RETURNING user_id, kind`,
      )
      .get({ tokenHash, now }) as { user_id: string; kind: InvitationKind } | undefined;
    if (!invitation) return undefined;
    this.setPasswordOf(invitation.user_id, passwordHash, now);
    return { userId: invitation.user_id, kind: invitation.kind };
  }

  private ofCustomer(customerId: string, id: string): UserRecord | undefined {
    const user = this.userById(id);
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
