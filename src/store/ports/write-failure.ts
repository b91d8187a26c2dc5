// Writes run in another thread (SQLite's ingest writer, the command writer) fail there: what
// crosses back is plain data, with the driver's code that the store's full-disk wrapper reads.

/** A write that failed in another thread: its message, and the driver's code (`SQLITE_FULL`), by which the store tells a full disk. */
export interface WriteFailure {
  message: string;
  code?: string;
}

/** The Error a WriteFailure stands for, with its code. */
export function writeError(failure: WriteFailure): Error {
  return Object.assign(new Error(failure.message), failure.code === undefined ? {} : { code: failure.code });
}

/** The WriteFailure of an error, to cross to another thread. */
export function writeFailure(error: unknown): WriteFailure {
  const code = (error as { code?: unknown } | null)?.code;
  return { message: error instanceof Error ? error.message : String(error), ...(typeof code === 'string' ? { code } : {}) };
}
