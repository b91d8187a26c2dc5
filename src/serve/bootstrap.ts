import { randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { MIN_PASSWORD_LENGTH, generatePassword, hashPassword } from '../auth/passwords.js';
import { operatorAuditEntry } from '../domain/audit.js';
import type { ServerContext } from '../server/context.js';
import type { ServeOptions } from './options.js';

/** The directories of the data directory, private to the service user: they hold the deployment's keys (docs/security.md "What is stored, and how"). */
export function prepareDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  for (const sub of ['pki', 'keys', 'exports', 'assets']) mkdirSync(join(dataDir, sub), { recursive: true, mode: 0o700 });
}

/** The shared directory of files (`--blob-dir`): created when missing, its mode left to its owner. */
export function prepareBlobDir(blobDir: string): void {
  for (const sub of ['exports', 'assets']) mkdirSync(join(blobDir, sub), { recursive: true, mode: 0o700 });
}

/** What a first start created. */
export interface Bootstrap {
  customerId: string;
  adminEmail: string;
  /** Set only when the password was generated: shown once, never stored in clear. */
  generatedPassword?: string;
}

/** On an empty deployment: the first customer and its administrator. */
export async function bootstrap(ctx: ServerContext, options: ServeOptions): Promise<Bootstrap | undefined> {
  if ((await ctx.store.customers.count()) > 0) return undefined;
  if (options.adminPassword !== undefined && options.adminPassword.length < MIN_PASSWORD_LENGTH) {
    throw new Error(`SCANHUB_ADMIN_PASSWORD must have at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  const generatedPassword = options.adminPassword ? undefined : generatePassword();
  const passwordHash = await hashPassword(options.adminPassword ?? generatedPassword!, ctx.config.passwordCost);
  const now = ctx.clock();
  const admin = { id: randomUUID(), customer_id: options.customerId, email: options.adminEmail, roles: ['ADMIN_ROLE'], password_hash: passwordHash, created: now };
  // Another process may have bootstrapped while the password was hashed: then it did.
  const audit = operatorAuditEntry(randomUUID(), options.customerId, now, 'user.created', { type: 'user', id: admin.id }, {
    email: options.adminEmail,
    roles: admin.roles,
    bootstrap: true,
  });
  if (!(await ctx.store.customers.bootstrap(options.customerId, admin, now, audit))) return undefined;
  return { customerId: options.customerId, adminEmail: options.adminEmail, generatedPassword };
}
