import type { AuditEntry } from '../../domain/audit.js';
import type { AuditOf } from './audit.js';
import type { UserRecord } from './users.js';

/** An API key as stored (docs/api-keys.md): its hash, never the key. */
export interface ApiKeyRecord {
  id: string;
  customer_id: string;
  name: string;
  /** SHA-256 of the key, lower-case hex (src/auth/api-keys.ts). */
  key_hash: string;
  permissions: string[];
  created: number;
  /** The user who created it: the key acts as them. */
  created_by: string;
  expires_at: number | null;
  /** When the key last authenticated a request, to the minute; null before its first use. */
  last_used: number | null;
  revoked: number | null;
}

export type NewApiKey = Omit<ApiKeyRecord, 'last_used' | 'revoked'>;

/**
 * API keys. Names are unique among a customer's keys that are not revoked; revoked keys stay (as
 * rows), so that a revoked key is told from an unknown one, and are listed no more.
 */
export interface ApiKeyRepository {
  /** False (nothing stored) when a key of the customer that is not revoked has the name. */
  create(key: NewApiKey, audit?: AuditEntry): Promise<boolean>;
  /** The key with this hash, revoked and expired ones included. */
  byHash(keyHash: string): Promise<ApiKeyRecord | undefined>;
  /** The same with the user who created it (undefined once deleted), in one round trip: what authenticating a request needs. */
  withCreator(keyHash: string): Promise<{ key: ApiKeyRecord; creator: UserRecord | undefined } | undefined>;
  /** The customer's keys that are not revoked, in (created, id) order after the position. */
  page(customerId: string, after: { created: number; id: string } | null, limit: number): Promise<ApiKeyRecord[]>;
  /** Revokes the customer's key at `now`; 'missing' (nothing written) when unknown, another customer's, or revoked already. */
  revoke(customerId: string, id: string, now: number, audit?: AuditOf<ApiKeyRecord>): Promise<'revoked' | 'missing'>;
  /** Sets last_used to `now` when it is null or at or before `staleAt`, in one statement: a key in steady use costs one write a minute. */
  touch(id: string, now: number, staleAt: number): Promise<void>;
}
