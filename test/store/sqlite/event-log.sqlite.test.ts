// The commit order's reads (src/store/sqlite/event-log.ts) walk a range of seq, the rowid, whatever
// indexes the events table has: a read's cost stays per event read, not per event of the customer.
import { describe, expect, it } from 'vitest';
import { AFTER_SQL, GATEWAY_AFTER_SQL } from '../../../src/store/sqlite/event-log.js';
import { openDatabase } from '../../../src/store/sqlite/open.js';

describe('SqliteEventLog reads', () => {
  it('search the events by their rowid range, with no index of the customer or the gateway and no sort', () => {
    const db = openDatabase(':memory:');
    const parameters = { after: 0, upto: 20_000, customerId: 'c', gatewayId: 'g', limit: 500 };
    for (const sql of [AFTER_SQL, GATEWAY_AFTER_SQL]) {
      const plan = db.prepare<typeof parameters, { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`).all(parameters);
      expect(plan.map((step) => step.detail)).toEqual(['SEARCH events USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)']);
    }
    db.close();
  });
});
