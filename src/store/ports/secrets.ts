import type { AuditEntry } from '../../domain/audit.js';

/** The secrets a deployment keeps (SQLite: files under the data directory; PostgreSQL: encrypted rows). */
export const SECRET_NAMES = ['pki/ca.key', 'pki/ca.crt', 'keys/idtoken.jwk', 'keys/links.key', 'keys/webhooks.key'] as const;
export type SecretName = (typeof SECRET_NAMES)[number];

export interface SecretRepository {
  /** The secret, created with `create()` when missing; when two processes race, both get the first one stored. */
  getOrCreate(name: SecretName, create: () => string | Promise<string>): Promise<string>;
  get(name: SecretName): Promise<string | undefined>;
  /**
   * Replaces the secret with `change(current)`, one replacement at a time (of two racing, the
   * second changes what the first stored), with the entries `audit` makes for the deployment's
   * customers (one in each customer's log). SQLite: the file is renamed over inside the database
   * transaction of the entries.
   */
  replace(name: SecretName, change: (current: string | undefined) => string, audit?: (customerIds: string[]) => AuditEntry[]): Promise<string>;
}
