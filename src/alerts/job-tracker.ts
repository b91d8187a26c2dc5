import { scanOf, trackScans, type TrackedScan, type TrackerState } from '../domain/job-tracking.js';
import { comparePositions, laterPosition } from '../domain/stream-cursor.js';
import type { Store } from '../store/ports/index.js';
import type { AlertWriter } from './alert-writer.js';

/** Events per read of the commit order. */
const EVENTS_PER_READ = 500;
/** Reads per customer and round: a backlog is worked off over several rounds, not in one long one. */
const READS_PER_ROUND = 20;

/**
 * The job tracker (docs/alerts.md "Jobs"), run by the evaluator under its lease: per customer
 * that needs it, reads the events committed after its cursor (the commit order the live stream
 * and the webhooks read, no copy of the events), feeds the scans through the job analysis' rules,
 * and moves the cursor with the open jobs, the last scans and the `job.completed` messages in one
 * transaction. A cursor that moved meanwhile (another instance took over) writes nothing: at least
 * once, in order, and no message twice.
 */
export class JobTracker {
  constructor(
    private readonly store: Pick<Store, 'alerts' | 'eventLog' | 'jobConfigs'>,
    private readonly writer: AlertWriter,
  ) {}

  /** Reads on for every customer in `wanted`; forgets the trackers of the others (they start at the head again when needed). */
  async run(wanted: ReadonlySet<string>, now: number): Promise<void> {
    for (const customerId of await this.store.alerts.trackedCustomers()) if (!wanted.has(customerId)) await this.store.alerts.dropTracker(customerId);
    for (const customerId of wanted) await this.readOn(customerId, now);
  }

  private async readOn(customerId: string, now: number): Promise<void> {
    const { alerts, eventLog } = this.store;
    let state = await alerts.tracker(customerId);
    if (!state) {
      await alerts.startTracker(customerId, { cursor: await eventLog.head(), started: now, open_jobs: [], last_scans: {} });
      return;
    }
    if (!eventLog.isPosition(state.cursor)) {
      // A cursor of another store (operator migrate copied SQLite's): go on from this store's head.
      const next = { ...state, cursor: await eventLog.head() };
      if (!(await alerts.advanceTracker(customerId, state.cursor, next, [], now))) return;
      state = next;
    }
    const configs = (await this.store.jobConfigs.list(customerId)).items;
    for (let round = 0; round < READS_PER_ROUND; round++) {
      const read = await eventLog.after(customerId, state.cursor, EVENTS_PER_READ);
      const cursor = laterPosition(state.cursor, read.reached);
      if (comparePositions(cursor, state.cursor) === 0) return;
      const scans = read.events.map((event) => scanOf(event.json)).filter((scan): scan is TrackedScan => scan !== undefined);
      const { open_jobs, last_scans, completed } = trackScans(state, configs, scans);
      const next: TrackerState = { cursor, started: state.started, open_jobs, last_scans };
      const told = await alerts.advanceTracker(customerId, state.cursor, next, completed.map((job) => JSON.stringify(job)), now);
      if (!told) return;
      await this.writer.wake(told);
      state = next;
      if (!read.more) return;
    }
  }
}
