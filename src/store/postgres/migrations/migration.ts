import type pg from 'pg';

/** One schema change: its statements run in the migration transaction (index.ts). */
export interface Migration {
  /** File name without extension, e.g. `0001_foundation`; the number orders them. */
  name: string;
  up: (client: pg.PoolClient) => Promise<void>;
}
