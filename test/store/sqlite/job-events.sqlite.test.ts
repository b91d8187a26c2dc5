import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { analyzeJobs, type AnalysisEvent } from '../../../src/domain/job-analysis.js';
import { insertEvents } from '../../../src/store/sqlite/event-rows.js';
import { JOB_MARKER_QUERY, JOB_MARKER_QUERY_SUBSTR, analyzeStoredJobs, prefixEnd } from '../../../src/store/sqlite/job-events.js';
import { openDatabase, type Db } from '../../../src/store/sqlite/open.js';
import { scanRow } from '../../helpers/events.js';

let db: Db;
beforeEach(() => {
  db = openDatabase(':memory:');
});
afterEach(() => db.close());

describe('prefixEnd', () => {
  const cases: [string, string | undefined][] = [
    ['JOB-START', 'JOB-STARU'],
    ['a\u{10FFFF}', 'b'],
    ['a\u{10FFFF}\u{10FFFF}', 'b'],
    ['\u{10FFFF}', undefined],
    ['\uD7FF', '\uE000'],
    ['x\u{1F600}', 'x\u{1F601}'],
  ];
  for (const [prefix, end] of cases) {
    it(`${JSON.stringify(prefix)} ends before ${JSON.stringify(end)}`, () => expect(prefixEnd(prefix)).toBe(end));
  }
});

describe('the stored analysis', () => {
  it('reads only the covering index of scans per gateway, by range and by substr', () => {
    for (const query of [JOB_MARKER_QUERY, JOB_MARKER_QUERY_SUBSTR]) {
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${query}`).all({ gateway: 'g', from: 0, to: 1, start: 'a', end: 'b', startEnd: 'b', endEnd: 'c' });
      expect((plan as { detail: string }[]).map((step) => step.detail)).toEqual([
        'SEARCH events USING COVERING INDEX events_gateway_created (gateway_id=? AND created>? AND created<?)',
      ]);
    }
  });

  it('agrees with the pure analysis on random codes, Unicode and the substr fallback included', () => {
    // A fixed linear congruential generator (its high bits): the same 300 trials on every run.
    let state = 12345;
    const random = (n: number) => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return Math.floor(state / 2 ** 16) % n;
    };
    const alphabet = ['J', 'j', 'é', '\uD7FF', '\uE000', '\u{1F600}', '\u{10FFFF}'];
    const word = (max: number) => Array.from({ length: 1 + random(max) }, () => alphabet[random(alphabet.length)]).join('');
    const gateways = ['g1', 'g2'];
    let jobs = 0;
    let fallbacks = 0;
    for (let trial = 0; trial < 300; trial++) {
      db.exec('DELETE FROM events');
      const events: AnalysisEvent[] = Array.from({ length: 40 }, (_, i) => ({
        id: `e${String(i).padStart(3, '0')}`,
        type: random(8) === 0 ? 'telemetry' : 'scan',
        created: random(30),
        scan_code: word(4),
        gateway_id: gateways[random(2)]!,
      }));
      insertEvents(db, 'c', events.map((e) => scanRow(e.id, e.gateway_id!, e.created, e.scan_code, e.type)));
      const barcodes = { start_barcode: word(2), end_barcode: word(2) };
      const range = { start_time: random(5), end_time: 20 + random(10) };
      const expected = analyzeJobs(barcodes, gateways, range, events);
      expect(analyzeStoredJobs(db, { gatewayIds: gateways, barcodes, range })).toEqual(expected);
      jobs += expected.reduce((n, g) => n + g.jobs.length, 0);
      if (prefixEnd(barcodes.start_barcode) === undefined || prefixEnd(barcodes.end_barcode) === undefined) fallbacks++;
    }
    // The trials are only worth something if they find jobs and reach the fallback.
    expect(jobs).toBeGreaterThan(100);
    expect(fallbacks).toBeGreaterThan(5);
  });
});
