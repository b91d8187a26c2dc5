import type { AuditEntry } from '../../domain/audit.js';
import type { CellMode } from '../../domain/csv.js';

export type ExportStatus = 'PENDING' | 'SUCCESSFUL' | 'FAILED';

/** An export task as stored. */
export interface ExportTaskRecord {
  id: string;
  customer_id: string;
  requested_by: string;
  start_time: number;
  end_time: number;
  /** How the file writes text cells. */
  cells: CellMode;
  status: ExportStatus;
  requested: number;
  completed: number | null;
  rows: number | null;
  /** The CSV, relative to the blob directory, while it is kept. */
  file: string | null;
  failure: string | null;
}

/** A task as a claim returns it: its lease is the claimant's. */
export interface ClaimedExportTask extends ExportTaskRecord {
  /** Claims of the task so far, this one included; a released claim (its server stopped on purpose) is not counted. */
  attempts: number;
}

export type NewExportTask = Pick<ExportTaskRecord, 'id' | 'customer_id' | 'requested_by' | 'start_time' | 'end_time' | 'cells' | 'requested'>;

/**
 * Export tasks. A task is run by whoever holds its lease (docs/postgresql.md "Background work on
 * several instances"): `claim` takes it, `renew` keeps it, and only the holder records the outcome,
 * so a task taken over after its lease expired is completed exactly once. Lease times are
 * wall-clock milliseconds.
 */
export interface ExportTaskRepository {
  /** A PENDING task, unless the customer has `maxPending` PENDING already (counted in the same transaction): then undefined. */
  create(task: NewExportTask, audit?: AuditEntry, maxPending?: number): Promise<ExportTaskRecord | undefined>;
  /** The task if it belongs to the customer. */
  byId(customerId: string, id: string): Promise<ExportTaskRecord | undefined>;
  /**
   * Takes the oldest (requested, id) PENDING task whose lease is free or ended before `now`, in one
   * statement: the lease is `owner`'s until `now + leaseMs`, attempts + 1. Undefined when none is free.
   */
  claim(owner: string, now: number, leaseMs: number): Promise<ClaimedExportTask | undefined>;
  /** Extends the lease to `until` while `owner` holds it and the task is PENDING; false when the lease was lost. */
  renew(id: string, owner: string, until: number): Promise<boolean>;
  /** Gives the lease back without an outcome (the owner stops): the task is free at once and the attempt does not count. */
  release(id: string, owner: string): Promise<boolean>;
  /**
   * At start-up, frees the leases no running process can hold (SQLite, one process per data
   * directory: all; PostgreSQL: none, their leases expire); how many.
   */
  releaseOrphaned(): Promise<number>;
  /** Records success while `owner` holds the lease of the PENDING task; false (nothing recorded) otherwise. */
  succeed(id: string, owner: string, completed: number, rows: number, file: string): Promise<boolean>;
  /** Records failure while `owner` holds the lease of the PENDING task; false (nothing recorded) otherwise. */
  fail(id: string, owner: string, completed: number, failure: string): Promise<boolean>;
  /** Tasks completed (SUCCESSFUL or FAILED) at or before `cutoff`, with their file while one is kept. */
  expiredBy(cutoff: number): Promise<{ id: string; file: string | null }[]>;
  /** Deletes a completed task (the caller deleted its file first); a PENDING one stays. */
  delete(id: string): Promise<void>;
  /** Files of the tasks still kept, for telling them from stray files. */
  keptFiles(): Promise<Set<string>>;
  /** How many tasks are in each status now (every status named, 0 when none), for /metrics. */
  countByStatus(): Promise<Record<ExportStatus, number>>;
}
