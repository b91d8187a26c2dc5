import type { AuditEntry } from '../../domain/audit.js';
import type { AuditOf } from './audit.js';

export interface Consent {
  version: string;
  timestamp: number;
}

/** A user as stored; roles parsed, consents parsed. */
export interface UserRecord {
  id: string;
  customer_id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  language: string | null;
  roles: string[];
  password_hash: string | null;
  consent_general_terms: Consent | null;
  consent_privacy_policy: Consent | null;
  created: number;
  last_updated: number;
  /** Raised by every password set and change of roles; an IdToken with another value is refused (src/server/access.ts). 0 at first. */
  session_version: number;
}

export interface NewUser {
  id: string;
  customer_id: string;
  email: string;
  first_name?: string | null;
  last_name?: string | null;
  language?: string | null;
  roles: string[];
  password_hash?: string | null;
  created: number;
}

/** What PATCH /{customer_id}/users/{user_id} may change. */
export type UserChanges = Partial<Pick<UserRecord, 'first_name' | 'last_name' | 'language' | 'roles'>>;

/** A user before and after a change, for its audit entry. */
export interface UserUpdate {
  before: UserRecord;
  after: UserRecord;
}

/** A single-use token that sets a password (only its SHA-256 is stored): an invitation for a user without one, a reset for a user with one. */
export type InvitationKind = 'invitation' | 'password-reset';

export interface NewInvitation {
  tokenHash: string;
  userId: string;
  customerId: string;
  kind: InvitationKind;
  created: number;
  expiresAt: number;
}

/** Why no invitation was issued: no such user in the customer, or the user's password state does not fit the kind. */
export type InvitationOutcome = 'issued' | 'missing' | 'has-password' | 'no-password';

/** A redeemed invitation: the user as it is now, and the kind of token. */
export interface Redeemed {
  user: UserRecord;
  kind: InvitationKind;
}

export interface CustomerRepository {
  exists(id: string): Promise<boolean>;
  count(): Promise<number>;
  /** The customer and its first administrator in one unit of work; nothing stored when refused. */
  createWithAdmin(id: string, admin: NewUser, now: number, audit?: AuditEntry): Promise<'created' | 'customer-exists' | 'email-taken'>;
  /** On an empty deployment only: as createWithAdmin; false when any customer exists already. */
  bootstrap(id: string, admin: NewUser, now: number, audit?: AuditEntry): Promise<boolean>;
}

/** Users: e-mail addresses unique per deployment, as domain/lockout.ts normalisedEmail compares them. */
export interface UserRepository {
  /** False when the e-mail is taken. */
  create(user: NewUser, audit?: AuditEntry): Promise<boolean>;
  byId(id: string): Promise<UserRecord | undefined>;
  /** The user whose address equals this one (ASCII letters case-insensitively, every other character exactly). */
  byEmail(email: string): Promise<UserRecord | undefined>;
  /** Users of the customer in (created, id) order after the key. */
  page(customerId: string, after: { created: number; id: string } | null, limit: number): Promise<UserRecord[]>;
  delete(customerId: string, id: string, audit?: AuditEntry): Promise<'deleted' | 'missing' | 'last-admin'>;
  /** A change of roles raises the session version; 'last-admin' (nothing stored) when it would leave the customer without an ADMIN_ROLE user. */
  update(customerId: string, id: string, changes: UserChanges, now: number, audit?: AuditOf<UserUpdate>): Promise<UserRecord | 'missing' | 'last-admin'>;
  /** Sets the password (operator), raises the session version and voids the user's outstanding invitations; `audit` in the same transaction. */
  setPassword(id: string, passwordHash: string, now: number, audit?: AuditEntry): Promise<void>;
  /** Replaces the hash by a costlier one of the same password (a log-in upgraded it) while it is still `previous`; false otherwise. */
  upgradePasswordHash(id: string, previous: string, upgraded: string): Promise<boolean>;
  /** Issues an invitation (user without a password) or a reset (user with one), voiding the user's earlier ones. */
  issueInvitation(invitation: NewInvitation, audit?: AuditEntry): Promise<InvitationOutcome>;
  /**
   * Sets the password of the user of an unused, unexpired token, uses it up, voids the user's
   * other ones and raises the session version; the user's id, or undefined.
   */
  redeemInvitation(tokenHash: string, passwordHash: string, now: number, audit?: AuditOf<Redeemed>): Promise<string | undefined>;
}

/**
 * Refused log-ins (docs/users.md "Lockout"), in the database so that every instance
 * counts the same. `key` is domain/lockout.ts lockoutKey: the user an address found, or the
 * normalised address.
 */
export interface LoginFailureRepository {
  /** The times of the key's refusals after `since` (exclusive), oldest first. */
  since(key: string, since: number): Promise<number[]>;
  /**
   * Records a refusal at `at`, forgets every refusal (of any key) at or before `forgetUpTo`, and
   * answers the key's refusals now (this one included), serialized per key: concurrent refusals
   * count 1, 2, 3, ... Writes `audit` with it, and `lock.entry` when the count is exactly `lock.refusals`.
   */
  record(key: string, at: number, forgetUpTo: number, audit?: AuditEntry[], lock?: { refusals: number; entry: AuditEntry }): Promise<number>;
}
