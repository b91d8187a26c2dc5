/**
 * Retention of events (docs/retention.md): how long a customer keeps its events, which events a
 * deletion takes, and how big its next batch may be so that no batch holds the database's writer
 * for long. Plain functions, no I/O.
 */

import type { CreatedIdKey } from './page-token.js';

export const DAY_MS = 24 * 3600 * 1000;

/** A finished deletion pass over one customer's old events, as the API shows it (`last_deletion`). */
export interface RetentionDeletion {
  /** When the pass began and ended, by the deployment's clock. */
  started: number;
  finished: number;
  /** Events with `created < cutoff` were deleted. */
  cutoff: number;
  deleted: number;
  batches: number;
  /** The longest a batch held the writer, in milliseconds. */
  longest_batch_ms: number;
}

/** A customer's retention as the API shows it: how long its events are kept (null: for ever), and its last finished deletion pass. */
export interface RetentionRecord {
  events_days: number | null;
  last_deletion: RetentionDeletion | null;
}

/** The longest retention period that can be set: 100 years. `null` keeps events for ever. */
export const MAX_RETENTION_DAYS = 36_500;

/**
 * The first `created` that a period of `days` keeps at `now`: events with `created < cutoff` are
 * deleted, `created >= cutoff` stay (half-open, as every range of the API).
 */
export function retentionCutoff(now: number, days: number): number {
  return now - days * DAY_MS;
}

/**
 * How long one batch should hold the writer (SQLite's write lock; PostgreSQL's transaction). In
 * `serve` a batch runs in the ingest writer thread between its commits: an ingest batch that
 * arrives meanwhile waits for it, about this long.
 */
export const TARGET_HOLD_MS = 5;
/** The hold no batch may exceed (docs/retention.md "When events are deleted"): a batch over it is logged as a warning. */
export const MAX_HOLD_MS = 50;
/** Rows of the first batch of a pass, before any hold was measured (about TARGET_HOLD_MS on SQLite). */
export const FIRST_BATCH = 100;
export const MIN_BATCH = 10;
export const MAX_BATCH = 20_000;

/**
 * The size of the next batch from the last one: as many rows as fit in `targetMs` at the rate the
 * last batch deleted them, shrinking at once but growing at most twofold per batch (one fast batch
 * on a cold page cache says little), within MIN_BATCH..MAX_BATCH.
 */
export function nextBatchSize(size: number, deleted: number, holdMs: number, targetMs = TARGET_HOLD_MS): number {
  const ceiling = Math.min(MAX_BATCH, size * 2);
  if (deleted === 0 || holdMs <= 0) return Math.max(MIN_BATCH, ceiling);
  const fitting = Math.floor((deleted * targetMs) / holdMs);
  return Math.max(MIN_BATCH, Math.min(ceiling, fitting));
}

/** Where a pass starts: before every event. Each batch then starts after the newest key the one before deleted. */
export const DELETION_START: CreatedIdKey = { created: Number.MIN_SAFE_INTEGER, id: '' };

/** The greatest (created, id) of the keys (a batch's deleted events), or undefined for none. */
export function newestKey(keys: readonly CreatedIdKey[]): CreatedIdKey | undefined {
  let newest: CreatedIdKey | undefined;
  for (const key of keys) if (!newest || key.created > newest.created || (key.created === newest.created && key.id > newest.id)) newest = key;
  return newest && { created: newest.created, id: newest.id };
}

/**
 * Events a pass deletes per second at most: deleting an event writes about a page (to SQLite's
 * WAL, then to the database file), and unbounded, a pass writes several times what ingest does,
 * whose commits then stall on the disk (docs/retention.md "Small batches"; bench/README.md
 * "retention").
 */
export const MAX_DELETED_PER_SECOND = 5000;

/**
 * The pause after a batch before the next one takes the writer again: at least as long as the
 * batch held it, so deletion never has more than half of the writer's time; long enough that the
 * pass deletes no more than `maxPerSecond` events a second; and never less than `minPauseMs`.
 */
export function pauseAfter(holdMs: number, deleted: number, minPauseMs: number, maxPerSecond = MAX_DELETED_PER_SECOND): number {
  const paced = (deleted * 1000) / maxPerSecond - holdMs;
  return Math.max(minPauseMs, Math.ceil(holdMs), Math.ceil(paced));
}
