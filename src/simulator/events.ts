import { randomUUID } from 'node:crypto';

/**
 * What a simulated gateway sends: scans of the wearable scanners attached to it, their telemetry
 * now and then, and (with job barcodes) start ... end job sequences that job analysis finds.
 */

/** Job barcodes to mix into the scans: `start` + suffix opens a job, `end` + suffix closes it. */
export interface JobBarcodes {
  start: string;
  end: string;
}

export type SimulatedEvent = Record<string, string | number>;

const SYMBOLOGIES = ['EAN-13', 'EAN-13', 'EAN-13', 'CODE-128', 'CODE-128', 'GS1-128', 'QR', 'DATAMATRIX'];
const TELEMETRY_SHARE = 0.1;
const SCANNERS_PER_GATEWAY = 3;
// Items scanned per job: a job spans a handful of scans.
const ITEMS_PER_JOB = { min: 3, max: 8 };

interface Scanner {
  deviceId: string;
  battery: number;
  temperature: number;
  steps: number;
}

const pick = <T>(values: readonly T[]): T => values[Math.floor(Math.random() * values.length)]!;
const between = (min: number, max: number) => min + Math.random() * (max - min);
const round1 = (value: number) => Math.round(value * 10) / 10;

/** The event stream of one simulated gateway. */
export class GatewayDevice {
  readonly counts = { scans: 0, telemetry: 0, jobs: 0 };
  private readonly scanners: Scanner[];
  private jobNumber = 0;
  private lastCreated = 0;
  /** Items still to scan in the open job; undefined when no job is open. */
  private itemsLeft?: number;

  constructor(
    readonly name: string,
    private readonly jobs?: JobBarcodes,
  ) {
    this.scanners = Array.from({ length: SCANNERS_PER_GATEWAY }, (_, k) => ({
      deviceId: `${name}-scanner-${k + 1}`,
      battery: Math.round(between(60, 100)),
      temperature: between(24, 30),
      steps: 0,
    }));
  }

  /** The `class: "gateway"` report a gateway sends when it connects. */
  report(): SimulatedEvent {
    return { class: 'gateway', model: 'SIM-GW-100', manufacturer: 'scanhub simulator', firmware: '1.4.2', type: 'stationary' };
  }

  /** The next event: mostly scans, a tenth telemetry. */
  next(now: number): SimulatedEvent {
    now = this.stamp(now);
    const scanner = pick(this.scanners);
    scanner.temperature = Math.min(45, Math.max(18, scanner.temperature + between(-0.3, 0.35)));
    scanner.steps += Math.round(between(0, 12));
    if (Math.random() < 0.02) scanner.battery = Math.max(5, scanner.battery - 1);
    if (Math.random() < TELEMETRY_SHARE) {
      this.counts.telemetry++;
      return {
        id: randomUUID(),
        class: 'event',
        type: 'telemetry',
        created: now,
        device_id: scanner.deviceId,
        device_battery: scanner.battery,
        device_firmware: '2.4.1',
        device_temperature: round1(scanner.temperature),
        metrics_worker_steps: scanner.steps,
      };
    }
    return this.scan(scanner, this.nextCode(), now);
  }

  /** The end barcode of a job still open, so that it completes; undefined otherwise. */
  finish(now: number): SimulatedEvent | undefined {
    if (!this.jobs || this.itemsLeft === undefined) return undefined;
    this.itemsLeft = undefined;
    this.counts.jobs++;
    return this.scan(pick(this.scanners), `${this.jobs.end}${this.jobNumber}`, this.stamp(now));
  }

  // Job analysis orders a gateway's scans by (created, id): events of one gateway get distinct,
  // increasing times so that a job's start, items and end keep their order.
  private stamp(now: number): number {
    this.lastCreated = Math.max(now, this.lastCreated + 1);
    return this.lastCreated;
  }

  private nextCode(): string {
    if (!this.jobs) return itemCode();
    if (this.itemsLeft === undefined) {
      this.jobNumber++;
      this.itemsLeft = Math.round(between(ITEMS_PER_JOB.min, ITEMS_PER_JOB.max));
      return `${this.jobs.start}${this.jobNumber}`;
    }
    if (this.itemsLeft === 0) {
      this.itemsLeft = undefined;
      this.counts.jobs++;
      return `${this.jobs.end}${this.jobNumber}`;
    }
    this.itemsLeft--;
    return itemCode();
  }

  private scan(scanner: Scanner, code: string, now: number): SimulatedEvent {
    this.counts.scans++;
    return {
      id: randomUUID(),
      class: 'event',
      type: 'scan',
      created: now,
      scan_code: code,
      scan_duration: Math.round(between(80, 420)),
      scan_decode_symbology: pick(SYMBOLOGIES),
      device_id: scanner.deviceId,
      device_battery: scanner.battery,
      device_firmware: '2.4.1',
      device_temperature: round1(scanner.temperature),
    };
  }
}

/** A 13-digit article number with a valid EAN-13 check digit. */
function itemCode(): string {
  const digits = Array.from({ length: 12 }, (_, i) => (i === 0 ? 4 : Math.floor(Math.random() * 10)));
  const sum = digits.reduce((total, digit, i) => total + digit * (i % 2 ? 3 : 1), 0);
  return digits.join('') + ((10 - (sum % 10)) % 10);
}
