/**
 * The store seam (docs/postgresql.md "The seam"), one file per aggregate, imported from here only;
 * one method is one unit of work. A method that makes a change the audit log records (docs/audit.md)
 * takes a trailing `audit?: AuditEntry` and writes it in the change's own transaction, so no entry is
 * lost and a refused change writes none; a change of several things takes one entry per thing, and
 * one whose actor the store learns only as it makes it (a redeemed token) takes `AuditOf<T>`.
 */
export * from './store.js';
export * from './users.js';
export * from './audit.js';
export * from './api-keys.js';
export * from './features.js';
export * from './gateways.js';
export * from './provisioning.js';
export * from './certificates.js';
export * from './events.js';
export * from './devices.js';
export * from './commands.js';
export * from './event-log.js';
export * from './ingest.js';
export * from './export-tasks.js';
export * from './retention.js';
export * from './jobs.js';
export * from './assets.js';
export * from './secrets.js';
export * from './signals.js';
export * from './locks.js';
export * from './webhooks.js';
export * from './write-failure.js';
export * from './leases.js';
export * from './presence.js';
export * from './alerts.js';
