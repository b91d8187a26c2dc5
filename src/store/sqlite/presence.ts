import type { PresenceRepository } from '../ports/index.js';
import { mergeConnections } from '../shared/presence.js';

/**
 * One process per data directory (data-dir-lock.ts): the connections are this process's, kept in
 * memory; nothing outlives it, so nothing needs to expire.
 */
export class SqlitePresence implements PresenceRepository {
  private readonly instances = new Map<string, ReadonlyMap<string, number>>();

  async publish(instance: string, connections: ReadonlyMap<string, number>): Promise<void> {
    this.instances.set(instance, new Map(connections));
  }

  async withdraw(instance: string): Promise<void> {
    this.instances.delete(instance);
  }

  async connected(): Promise<Map<string, number>> {
    return mergeConnections(this.instances.values());
  }
}
