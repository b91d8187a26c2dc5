/**
 * The store seam: what the rest of scanhub may ask of a store, one file per aggregate. Routes,
 * MQTT, exports, jobs and operator commands import these interfaces only, from this file;
 * `sqlite/` and `postgres/` implement them and are the only code that touches a database driver.
 * One method is one unit of work: no transaction handle crosses the seam, so work that must be
 * atomic across aggregates (a customer's bootstrap, a provisioning package) is one method.
 *
 * Both stores give byte-identical answers for the same data (the contract tests in test/store/):
 * the same keyset order (created, id), the same page tokens, the same JSON bytes of an event
 * page, the same CSV.
 *
 * The audit log (DESIGN.md "Trust"): a method that makes a change the audit log records takes a
 * trailing `audit?: AuditEntry` and writes that entry in the same transaction as the change, so
 * no entry is lost and none describes a change that did not happen: a refused change (a name
 * clash, a 409, 'missing') writes none. A change of several things takes one entry per thing
 * (`AuditEntry[]`); one whose actor or customer the store learns only as it makes it (a redeemed
 * token) takes a function of what it learned (`AuditOf<T>`). `audit.append` is for actions that
 * change nothing else (a log-in).
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
export * from './event-log.js';
export * from './ingest.js';
export * from './export-tasks.js';
export * from './retention.js';
export * from './jobs.js';
export * from './assets.js';
export * from './secrets.js';
export * from './signals.js';
export * from './locks.js';
