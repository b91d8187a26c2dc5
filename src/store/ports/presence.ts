/**
 * Which gateways are connected now, to any instance (docs/alerts.md "station_silent"): each
 * instance publishes the gateways connected to it and since when; an instance that dies stops
 * renewing, and its connections no longer count once they expired.
 */
export interface PresenceRepository {
  /** Replaces this instance's connections (gateway id -> connected since, epoch ms), valid for `ttlMs` unless published again. */
  publish(instance: string, connections: ReadonlyMap<string, number>, ttlMs: number): Promise<void>;
  /** Withdraws this instance's connections (it stops). */
  withdraw(instance: string): Promise<void>;
  /** Every gateway connected to a live instance and since when (the newest connection when two instances name it). */
  connected(): Promise<Map<string, number>>;
}

