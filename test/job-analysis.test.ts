import { describe, expect, it } from 'vitest';
import { analyzeJobs, classifyCode, type AnalysisEvent, type GatewayJobs, type JobBarcodes } from '../src/domain/job-analysis.js';

const G1 = 'gw-1';
const G2 = 'gw-2';
const G3 = 'gw-3';

/** A scan on gateway `gateway` at `created` with the code; the id is the code's label. */
function scan(id: string, created: number, code: string, gateway = G1): AnalysisEvent {
  return { id, type: 'scan', created, scan_code: code, gateway_id: gateway };
}

function telemetry(id: string, created: number, gateway = G1): AnalysisEvent {
  return { id, type: 'telemetry', created, scan_code: null, gateway_id: gateway };
}

const job = (start_time: number, end_time: number, start_event_id: string, end_event_id: string) => ({
  start_time,
  end_time,
  start_event_id,
  end_event_id,
});

interface Case {
  name: string;
  barcodes?: JobBarcodes;
  gateways?: string[];
  range?: { start_time: number; end_time: number };
  events: AnalysisEvent[];
  expected: GatewayJobs[];
}

const JOB: JobBarcodes = { start_barcode: 'JOB-START', end_barcode: 'JOB-END' };

const cases: Case[] = [
  {
    name: 'a start and an end make one job',
    events: [scan('a', 100, 'JOB-START-1'), scan('b', 150, '4006381333931'), scan('c', 200, 'JOB-END-1')],
    expected: [{ gateway_id: G1, jobs: [job(100, 200, 'a', 'c')] }],
  },
  {
    name: 'a second start replaces the open job',
    events: [scan('a', 100, 'JOB-START'), scan('b', 150, 'JOB-START'), scan('c', 200, 'JOB-END')],
    expected: [{ gateway_id: G1, jobs: [job(150, 200, 'b', 'c')] }],
  },
  {
    name: 'an end with no open job produces nothing',
    events: [scan('a', 100, 'JOB-END'), scan('b', 150, 'JOB-START'), scan('c', 200, 'JOB-END'), scan('d', 250, 'JOB-END')],
    expected: [{ gateway_id: G1, jobs: [job(150, 200, 'b', 'c')] }],
  },
  {
    name: 'a job still open at end_time produces nothing',
    range: { start_time: 0, end_time: 300 },
    events: [scan('a', 100, 'JOB-START'), scan('b', 200, 'JOB-END'), scan('c', 250, 'JOB-START'), scan('d', 300, 'JOB-END')],
    expected: [{ gateway_id: G1, jobs: [job(100, 200, 'a', 'b')] }],
  },
  {
    name: 'a longer start prefix decides for a code that begins with both',
    barcodes: { start_barcode: 'JOB-S', end_barcode: 'JOB' },
    events: [scan('a', 100, 'JOB-S1'), scan('b', 150, 'JOB-S2'), scan('c', 200, 'JOB-X')],
    expected: [{ gateway_id: G1, jobs: [job(150, 200, 'b', 'c')] }],
  },
  {
    name: 'a longer end prefix decides for a code that begins with both',
    barcodes: { start_barcode: 'JOB', end_barcode: 'JOB-E' },
    events: [scan('a', 100, 'JOB-1'), scan('b', 150, 'JOB-E1'), scan('c', 200, 'JOB-E2'), scan('d', 250, 'JOB-2')],
    expected: [{ gateway_id: G1, jobs: [job(100, 150, 'a', 'b')] }],
  },
  {
    name: 'equal prefixes alternate: open when none is open, close otherwise',
    barcodes: { start_barcode: 'TOGGLE', end_barcode: 'TOGGLE' },
    events: [scan('a', 100, 'TOGGLE'), scan('b', 200, 'TOGGLE-x'), scan('c', 300, 'TOGGLE'), scan('d', 400, 'TOGGLE'), scan('e', 500, 'TOGGLE')],
    expected: [{ gateway_id: G1, jobs: [job(100, 200, 'a', 'b'), job(300, 400, 'c', 'd')] }],
  },
  {
    name: 'two gateways interleaved in time keep their own jobs',
    gateways: [G2, G1],
    events: [
      scan('a', 100, 'JOB-START', G1),
      scan('b', 110, 'JOB-START', G2),
      scan('c', 120, 'JOB-END', G1),
      scan('d', 130, 'JOB-START', G1),
      scan('e', 140, 'JOB-END', G2),
      scan('f', 150, 'JOB-END', G1),
    ],
    expected: [
      { gateway_id: G2, jobs: [job(110, 140, 'b', 'e')] },
      { gateway_id: G1, jobs: [job(100, 120, 'a', 'c'), job(130, 150, 'd', 'f')] },
    ],
  },
  {
    name: 'an event at start_time is included, one at end_time is not',
    range: { start_time: 100, end_time: 300 },
    events: [
      scan('a', 99, 'JOB-START'),
      scan('b', 100, 'JOB-END'),
      scan('c', 100, 'JOB-START'),
      scan('d', 200, 'JOB-END'),
      scan('e', 250, 'JOB-START'),
      scan('f', 300, 'JOB-END'),
    ],
    expected: [{ gateway_id: G1, jobs: [job(100, 200, 'c', 'd')] }],
  },
  {
    name: 'telemetry among the scans is ignored',
    events: [
      scan('a', 100, 'JOB-START'),
      telemetry('b', 120),
      { id: 'c', type: 'telemetry', created: 130, scan_code: 'JOB-END', gateway_id: G1 },
      scan('d', 200, 'JOB-END'),
    ],
    expected: [{ gateway_id: G1, jobs: [job(100, 200, 'a', 'd')] }],
  },
  {
    name: 'events sharing a millisecond are ordered by id, whatever the input order',
    events: [scan('b', 100, 'JOB-END'), scan('c', 100, 'JOB-START'), scan('a', 100, 'JOB-START'), scan('d', 100, 'JOB-END')],
    expected: [{ gateway_id: G1, jobs: [job(100, 100, 'a', 'b'), job(100, 100, 'c', 'd')] }],
  },
  {
    name: 'a gateway with no events is listed with no jobs',
    gateways: [G1, G3],
    events: [scan('a', 100, 'JOB-START'), scan('b', 200, 'JOB-END')],
    expected: [
      { gateway_id: G1, jobs: [job(100, 200, 'a', 'b')] },
      { gateway_id: G3, jobs: [] },
    ],
  },
  {
    name: 'events of gateways outside the job are ignored',
    events: [scan('a', 100, 'JOB-START', G2), scan('b', 200, 'JOB-END', G1)],
    expected: [{ gateway_id: G1, jobs: [] }],
  },
  {
    name: 'prefixes are case-sensitive and must match at the start',
    events: [scan('a', 100, 'job-start'), scan('b', 110, 'X-JOB-START'), scan('c', 120, 'JOB-START'), scan('d', 200, 'job-end'), scan('e', 300, 'JOB-END')],
    expected: [{ gateway_id: G1, jobs: [job(120, 300, 'c', 'e')] }],
  },
];

describe('analyzeJobs', () => {
  for (const c of cases) {
    it(c.name, () => {
      const result = analyzeJobs(c.barcodes ?? JOB, c.gateways ?? [G1], c.range ?? { start_time: 0, end_time: 1_000 }, c.events);
      expect(result).toEqual(c.expected);
    });
  }
});

describe('classifyCode', () => {
  it('returns undefined for a code that matches neither prefix', () => {
    expect(classifyCode('4006381333931', JOB, false)).toBeUndefined();
  });
  it('decides equal prefixes by whether a job is open', () => {
    const same = { start_barcode: 'X', end_barcode: 'X' };
    expect([classifyCode('X1', same, false), classifyCode('X1', same, true)]).toEqual(['start', 'end']);
  });
});
