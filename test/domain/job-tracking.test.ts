// The job tracker's step (src/domain/job-tracking.ts): the analysis' rules over scans read in
// commit order, under the job configurations as they are now.
import { describe, expect, it } from 'vitest';
import type { JobConfig } from '../../src/domain/job-configs.js';
import { scanOf, trackScans, type TrackedScan } from '../../src/domain/job-tracking.js';

const config = (id: string, gatewayIds: string[], start = 'S', end = 'E'): JobConfig => ({
  job_config_id: id,
  job_name: `job ${id}`,
  created: 0,
  last_updated: 0,
  start_barcode: start,
  end_barcode: end,
  gateway_ids: gatewayIds,
  class: 'jobconfig',
  version: 1,
});
const scan = (id: string, gatewayId: string, created: number, code: string): TrackedScan => ({ id, gateway_id: gatewayId, created, scan_code: code });
const empty = { open_jobs: [], last_scans: {} };

describe('trackScans', () => {
  it('completes a job at its end, replaces a start that never ended, and keeps the open one', () => {
    const after = trackScans(empty, [config('c', ['g1', 'g2'])], [scan('1', 'g1', 10, 'S-a'), scan('2', 'g1', 20, 'S-b'), scan('3', 'g1', 30, 'x'), scan('4', 'g1', 40, 'E-b'), scan('5', 'g2', 50, 'S-c'), scan('6', 'g2', 45, 'item')]);
    expect(after).toEqual({
      completed: [{ job_config_id: 'c', job_name: 'job c', gateway_id: 'g1', start_time: 20, end_time: 40, start_event_id: '2', end_event_id: '4' }],
      open_jobs: [{ job_config_id: 'c', gateway_id: 'g2', start_event_id: '5', opened_at: 50 }],
      last_scans: { g1: 40, g2: 50 },
    });
  });

  it('goes on from the state of a read before; an end with no open job completes nothing', () => {
    const first = trackScans(empty, [config('c', ['g1'])], [scan('1', 'g1', 10, 'S'), scan('0', 'g1', 5, 'E')]);
    expect(first.completed).toEqual([expect.objectContaining({ start_event_id: '1', end_event_id: '0' })]);
    const second = trackScans(first, [config('c', ['g1'])], [scan('2', 'g1', 20, 'E'), scan('3', 'g1', 30, 'S')]);
    expect(second).toEqual({ completed: [], open_jobs: [{ job_config_id: 'c', gateway_id: 'g1', start_event_id: '3', opened_at: 30 }], last_scans: { g1: 30 } });
  });

  it('applies configurations as they are now: one deleted or no longer naming the gateway drops its open job; two configurations track apart', () => {
    const state = {
      open_jobs: [
        { job_config_id: 'gone', gateway_id: 'g1', start_event_id: '1', opened_at: 1 },
        { job_config_id: 'c', gateway_id: 'g-removed', start_event_id: '2', opened_at: 2 },
        { job_config_id: 'c', gateway_id: 'g1', start_event_id: '3', opened_at: 3 },
      ],
      last_scans: { g1: 3 },
    };
    const after = trackScans(state, [config('c', ['g1']), config('d', ['g1'], 'PICK', 'DONE')], [scan('4', 'g1', 4, 'PICK-1'), scan('5', 'g1', 5, 'E-1')]);
    expect(after.completed.map((job) => [job.job_config_id, job.start_event_id, job.end_event_id])).toEqual([['c', '3', '5']]);
    expect(after.open_jobs).toEqual([{ job_config_id: 'd', gateway_id: 'g1', start_event_id: '4', opened_at: 4 }]);
  });
});

describe('scanOf', () => {
  it('reads a scan of a gateway from the event JSON; telemetry and scans without code or gateway are not scans', () => {
    expect(scanOf('{"id":"e1","class":"event","type":"scan","created":7,"scan_code":"S-1","gateway_id":"g"}')).toEqual({ id: 'e1', created: 7, scan_code: 'S-1', gateway_id: 'g' });
    expect(scanOf('{"id":"e2","type":"telemetry","created":7,"gateway_id":"g"}')).toBeUndefined();
    expect(scanOf('{"id":"e3","type":"scan","created":7,"gateway_id":"g"}')).toBeUndefined();
    expect(scanOf('{"id":"e4","type":"scan","created":7,"scan_code":"S"}')).toBeUndefined();
  });
});
