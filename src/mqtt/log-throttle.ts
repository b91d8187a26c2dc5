import type { IngestLog } from './ingest.js';

/** How often one kind of connection refusal may be logged; the counters in BrokerStats have every one. */
export const REFUSAL_LOG_INTERVAL_MS = 10_000;

/**
 * Logs a warning at most once per interval per key, with the number of lines suppressed since the
 * previous one. Unauthenticated peers decide how often refusals happen: without this, a flood of
 * idle sockets would also be a flood of log lines.
 */
export class ThrottledLog {
  private readonly last = new Map<string, { at: number; suppressed: number }>();

  constructor(
    private readonly log: IngestLog,
    private readonly intervalMs = REFUSAL_LOG_INTERVAL_MS,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Logs `msg` with `fields` unless a line of the same key was logged within the interval. */
  warn(key: string, fields: Record<string, unknown>, msg: string): void {
    const now = this.clock();
    const last = this.last.get(key);
    if (last && now - last.at < this.intervalMs) {
      last.suppressed++;
      return;
    }
    this.last.set(key, { at: now, suppressed: 0 });
    this.log.warn({ ...fields, suppressed: last?.suppressed ?? 0 }, msg);
  }
}
