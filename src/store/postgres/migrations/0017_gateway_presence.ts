import type { Migration } from './migration.js';

// Which gateways each instance has connected (src/store/postgres/presence.ts). SQLite keeps them
// in its one process's memory: no migration there. Not copied by operator migrate: connections
// are not data, each instance publishes its own.
export const migration: Migration = {
  name: '0017_gateway_presence',
  async up(client) {
    await client.query(`
      CREATE TABLE gateway_presence (
        instance text PRIMARY KEY,
        connections text NOT NULL,
        expires bigint NOT NULL
      );
    `);
  },
};
