import pg from 'pg';
import { StorageFull, StoreUnavailable, type StorePurpose } from '../ports/index.js';

/** Connections per pool: the server's main store serves HTTP; ingest writers and readers need few. */
const POOL_SIZE: Record<StorePurpose, number> = { server: 8, ingest: 2, reader: 2 };

/** What runs a statement: a client in a transaction, or the Database (one statement alone). */
export interface Queryable {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  query<R extends pg.QueryResultRow = any>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

/** Type parsers of our pools: bigint (times in milliseconds, counts) as a JS number, not a string. */
function typeParsers(): pg.CustomTypesConfig {
  const types = new pg.TypeOverrides();
  types.setTypeParser(pg.types.builtins.INT8, Number);
  return types;
}

// SQLSTATE 53100 disk_full: a data file could not be extended (the server stays up), or a WAL
// segment could not be written (the server then PANICs and restarts, which the client sees as a
// connection failure). Measured on PostgreSQL 15 with its data directory on a full tmpfs.
const DISK_FULL_SQLSTATE = '53100';

/** What a full disk of PostgreSQL is reported as (HTTP 507 details, /healthz); the server's own message goes to the log. */
const DISK_FULL_REASON = `PostgreSQL has no space left on its disk (SQLSTATE ${DISK_FULL_SQLSTATE} disk_full)`;

/** Whether PostgreSQL refused the statement for lack of disk space; the connection itself is fine. */
export function isStorageFull(error: unknown): boolean {
  return error instanceof StorageFull || (error as { code?: unknown } | null)?.code === DISK_FULL_SQLSTATE;
}

// SQLSTATE classes that say the server or the connection failed, not the statement:
// 08 connection exception, 53 insufficient resources (too many connections; disk full is StorageFull),
// 57 operator intervention (admin shutdown, crash shutdown, cannot connect now, query canceled),
// 58 system error (I/O).
const UNAVAILABLE_SQLSTATE = /^(08|53|57|58)/;
/** An error code that is PostgreSQL's SQLSTATE (five characters), not one of Node's (ECONNRESET...). */
export const SQLSTATE = /^[0-9A-Z]{5}$/;
// What node-postgres throws without a SQLSTATE when the connection itself is gone.
const CONNECTION_MESSAGES = /connection terminated|timeout exceeded when trying to connect|connection error|not queryable|client was closed|connection timeout|socket/i;

/** Whether the error says the database could not be reached or failed as a whole (not the statement's data). */
export function isConnectionFailure(error: unknown): boolean {
  if (error instanceof StoreUnavailable) return !(error instanceof StorageFull);
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code === DISK_FULL_SQLSTATE) return false;
  if (typeof code === 'string') {
    if (SQLSTATE.test(code)) return UNAVAILABLE_SQLSTATE.test(code);
    // Node's system errors: ECONNREFUSED, ECONNRESET, ENOENT (socket gone), EPIPE, ETIMEDOUT, EAI_AGAIN...
    if (/^E[A-Z_]+$/.test(code)) return true;
  }
  // Only plain Errors (node-postgres's own): ours (GatewayNameTaken...) may quote any text.
  return (error as object).constructor === Error && typeof message === 'string' && CONNECTION_MESSAGES.test(message);
}

/** The error as StorageFull or StoreUnavailable when it is a full disk or a connection failure; otherwise the error itself. */
export function mapFailure(error: unknown): unknown {
  if (error instanceof StoreUnavailable) return error;
  if (isStorageFull(error)) return new StorageFull(DISK_FULL_REASON, { cause: error });
  if (!isConnectionFailure(error)) return error;
  const { code, message } = error as { code?: string; message?: string };
  const reason = String(message || code || error).split('\n')[0];
  return new StoreUnavailable(`PostgreSQL is unavailable: ${reason}${code && !reason.includes(code) ? ` (${code})` : ''}`, { cause: error });
}

/** Rolls the probe's transaction back once it has written. */
class ProbeDone extends Error {}

export type Isolation = 'read committed' | 'repeatable read' | 'serializable';

/**
 * One pool of connections to the deployment database, and the two ways to use it: a statement
 * alone, or a function run in a transaction on one connection. Both throw StoreUnavailable when
 * the server cannot be reached; the pool drops broken connections and makes new ones when the
 * server is back.
 */
export class Database {
  readonly pool: pg.Pool;
  /** The last error of an idle connection (the server went away while nobody was using it). */
  lastIdleError: Error | undefined;
  /** Told each time a statement was refused for lack of disk space (the store's StorageStatus). */
  onStorageFull: ((reason: string) => void) | undefined;

  constructor(url: string, purpose: StorePurpose, options: { max?: number } = {}) {
    this.pool = new pg.Pool({
      connectionString: url,
      max: options.max ?? POOL_SIZE[purpose],
      types: typeParsers(),
      connectionTimeoutMillis: 10_000,
      idleTimeoutMillis: 30_000,
      application_name: `scanhub-${purpose}`,
    });
    // An idle client whose server went away emits here; without a listener the process would die.
    // The pool has already dropped that client; the next query opens a new connection.
    this.pool.on('error', (error) => {
      this.lastIdleError = error;
    });
  }

  /** Runs one statement (rows as objects). */
  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(text, values);
    } catch (error) {
      throw this.failure(error);
    }
  }

  /** Runs one statement, rows as arrays of the selected values. */
  async queryArrays<R extends unknown[] = unknown[]>(text: string, values?: unknown[]): Promise<R[]> {
    try {
      return (await this.pool.query<R>({ text, values, rowMode: 'array' })).rows;
    } catch (error) {
      throw this.failure(error);
    }
  }

  /**
   * Runs `work` on one connection of the pool, given back afterwards, or destroyed when it failed.
   * A checked-out client has no 'error' listener of the pool's: when the server goes away between
   * two statements its socket emits (EPIPE, ECONNRESET), and without this one the error would be
   * uncaught and kill the thread (the ingest writer). The statement in flight fails with it anyway.
   */
  async withClient<T>(work: (client: pg.PoolClient, markBroken: (error: Error) => void) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw mapFailure(error);
    }
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken ??= error;
    };
    client.on('error', onError);
    try {
      return await work(client, onError);
    } catch (error) {
      if (isConnectionFailure(error)) broken ??= error as Error;
      throw this.failure(error);
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }

  /**
   * Runs `work` in one transaction on one connection: committed when it resolves, rolled back
   * when it throws (its error is rethrown, a connection failure as StoreUnavailable).
   */
  async transaction<T>(work: (client: pg.PoolClient) => Promise<T>, options: { isolation?: Isolation; readOnly?: boolean } = {}): Promise<T> {
    return this.withClient(async (client, markBroken) => {
      const mode = `${options.isolation ? ` ISOLATION LEVEL ${options.isolation.toUpperCase()}` : ''}${options.readOnly ? ' READ ONLY' : ''}`;
      await client.query(`BEGIN${mode}`);
      try {
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        // After a connection failure there is nothing to roll back (the connection is destroyed).
        if (!isConnectionFailure(error)) {
          try {
            await client.query('ROLLBACK');
          } catch (rollbackError) {
            markBroken(rollbackError as Error);
          }
        }
        throw error;
      }
    });
  }

  /** The error as the store throws it (mapFailure); a full disk is told to onStorageFull first. */
  private failure(error: unknown): unknown {
    const mapped = mapFailure(error);
    if (mapped instanceof StorageFull && mapped !== error) {
      this.onStorageFull?.(mapped.message);
    }
    return mapped;
  }

  /**
   * The probe of a full PostgreSQL: 1 MiB into a temporary table, rolled back. Its file is
   * extended on the database's disk (temporary tables are not WAL-logged), so this rejects with
   * StorageFull while that disk has no room.
   */
  async probeStorage(): Promise<void> {
    await this.transaction(async (client) => {
      await client.query('CREATE TEMPORARY TABLE scanhub_storage_probe (bytes text) ON COMMIT DROP');
      await client.query("INSERT INTO scanhub_storage_probe SELECT repeat(md5(i::text), 64) FROM generate_series(1, 512) AS i");
      throw new ProbeDone();
    }).catch((error: unknown) => {
      if (!(error instanceof ProbeDone)) throw error;
    });
  }

  /** Resolves when the server answers `SELECT 1` within `timeoutMs`. */
  async ping(timeoutMs = 2000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StoreUnavailable(`PostgreSQL did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([this.query('SELECT 1'), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** The SQLSTATE of a unique violation and the constraint it names. */
export function uniqueViolation(error: unknown): string | undefined {
  const { code, constraint } = (error ?? {}) as { code?: string; constraint?: string };
  return code === '23505' ? (constraint ?? '') : undefined;
}
