// Which gateways are connected to any instance (docs/alerts.md "station_silent"): each instance
// publishes its own, the newest connection wins when two name a gateway, a withdrawn or expired
// publication no longer counts. PostgreSQL: two Store objects on one database stand for two
// instances; SQLite: one process per data directory, so both publish through one store.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/ports/index.js';
import { describePostgres } from '../helpers/postgres.js';
import { ownDatabase, type OwnDatabase } from '../helpers/test-store.js';
import { until } from '../helpers/until.js';

function presenceSuite(kind: 'sqlite' | 'postgres') {
  let database: OwnDatabase;
  let a: Store;
  let b: Store;

  beforeEach(async () => {
    database = await ownDatabase(kind);
    a = await database.open();
    b = kind === 'postgres' ? await database.open() : a;
  });
  afterEach(() => database.close());

  it('merges the instances publications, the newest connection of a gateway named twice, until withdrawn', async () => {
    expect(await a.presence.connected()).toEqual(new Map());
    await a.presence.publish('instance-a', new Map([['g1', 100], ['g2', 200]]), 30_000);
    await b.presence.publish('instance-b', new Map([['g2', 300], ['g3', 50]]), 30_000);
    expect(await a.presence.connected()).toEqual(new Map([['g1', 100], ['g2', 300], ['g3', 50]]));

    // A publication replaces the instance's previous one whole.
    await a.presence.publish('instance-a', new Map([['g4', 400]]), 30_000);
    expect(await b.presence.connected()).toEqual(new Map([['g2', 300], ['g3', 50], ['g4', 400]]));

    await b.presence.withdraw('instance-b');
    expect(await a.presence.connected()).toEqual(new Map([['g4', 400]]));
  });

  if (kind === 'postgres') {
    it('no longer counts a publication its instance stopped renewing (killed) once it expired', async () => {
      await a.presence.publish('instance-a', new Map([['g1', 100]]), 30_000);
      await b.presence.publish('instance-b', new Map([['g2', 200]]), 200);
      expect(await a.presence.connected()).toEqual(new Map([['g1', 100], ['g2', 200]]));
      expect(await until(() => a.presence.connected(), (map) => !map.has('g2'))).toEqual(new Map([['g1', 100]]));
    });
  }
}

describe('gateway presence on SQLite', () => presenceSuite('sqlite'));
describePostgres('gateway presence on PostgreSQL', () => presenceSuite('postgres'));
