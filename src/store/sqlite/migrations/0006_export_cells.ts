import type { Migration } from './migration.js';

// How an export task writes text cells (docs/events.md "Exports": `cells`, safe unless raw). Kept
// with the task because its file is written after the request, by a worker. Tasks of earlier
// versions wrote every cell as stored, so their rows say `raw`; every new task names its mode.
export const migration: Migration = {
  name: '0006_export_cells',
  up(db) {
    db.exec(`ALTER TABLE export_tasks ADD COLUMN cells TEXT NOT NULL DEFAULT 'raw' CHECK (cells IN ('safe', 'raw'))`);
  },
};
