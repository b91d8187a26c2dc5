import type { LeaseRepository } from '../ports/index.js';

/** One process per data directory (data-dir-lock.ts): it holds every lease. */
export class SqliteLeases implements LeaseRepository {
  async claim(): Promise<boolean> {
    return true;
  }

  async release(): Promise<void> {}
}
