import { describe, expect, it } from 'vitest';
import { analyzeJobs, classifyCode } from '../../src/domain/job-analysis.js';
import { DEFAULT_RANGE, G1, JOB, cases } from '../../fixtures/job-analysis-cases.js';

describe('analyzeJobs', () => {
  for (const c of cases) {
    it(c.name, () => {
      const result = analyzeJobs(c.barcodes ?? JOB, c.gateways ?? [G1], c.range ?? DEFAULT_RANGE, c.events);
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
