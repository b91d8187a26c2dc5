import { workerScript } from '../../threads/worker-script.js';
import type { Db } from './open.js';

/** A thread a store runs beside ingest, as the broker's supervisor needs it. */
export interface StoreThread {
  /** Its name in logs and /healthz. */
  name: string;
  /** The compiled entry; it posts THREAD_READY when ready and exits on the message 'close'. */
  entry: URL;
  workerData: unknown;
  /** A message the thread posted: something to warn about, with its fields. */
  warning(message: unknown): { fields: object; message: string };
}

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
    warning: (message) => ({ fields: { reason: (message as { checkpointError: string }).checkpointError }, message: 'WAL checkpoint failed' }),
  };
}
