import { workerScript } from '../../threads/worker-script.js';
import type { StoreThread } from '../ports/index.js';
import type { Db } from './open.js';

/** What the checkpointer posts: a checkpoint failed (told once per reason), or works again. */
export type CheckpointReport = { checkpointError: string; storageFull: string | undefined } | { checkpointRecovered: string };

/**
 * The checkpointer keeps WAL copying and syncing off the ingest writer's path
 * (docs/gateways-mqtt.md). From now on the server's own connection never checkpoints: an HTTP
 * write on it must not copy the WAL back (and sync) on the event loop that serves TLS and MQTT.
 */
export function walCheckpointer(db: Db): StoreThread {
  db.pragma('wal_autocheckpoint = 0');
  return {
    name: 'checkpointer',
    entry: workerScript(import.meta.url, './checkpoint-thread-entry.js'),
    workerData: { databaseFile: db.name },
    warning: (message) => {
      const report = message as CheckpointReport;
      if ('checkpointRecovered' in report) return { fields: { failed_with: report.checkpointRecovered }, message: 'WAL checkpoints work again' };
      return { fields: { reason: report.checkpointError }, message: 'WAL checkpoint failed (not told again until it works or fails otherwise)', storageFull: report.storageFull };
    },
  };
}
