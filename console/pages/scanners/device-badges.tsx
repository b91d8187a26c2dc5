import type { DeviceStatus } from '../../../src/client/devices';
import { Badge, type BadgeTone } from '../../components/badge';

/** Below this battery level (percent) a scanner counts as low: the filter and the badge agree. */
export const LOW_BATTERY = 20;

const STATUS_LOOKS: Record<DeviceStatus, { tone: BadgeTone; text: string }> = {
  ACTIVE: { tone: 'good', text: 'Active' },
  INACTIVE: { tone: 'neutral', text: 'Inactive' },
  LOST: { tone: 'bad', text: 'Lost' },
};

/** A scanner's status (docs/devices.md: an event within 2 hours, none for 7 days, or between) in words. */
export function DeviceStatusBadge({ status }: { status: DeviceStatus }) {
  const look = STATUS_LOOKS[status] ?? { tone: 'neutral' as const, text: status };
  return <Badge tone={look.tone}>{look.text}</Badge>;
}

/** The last battery level reported, rounded to a percent; "low" said in words, not only in colour. */
export function BatteryBadge({ battery }: { battery: number | null }) {
  if (battery === null) return <Badge tone="neutral">unknown</Badge>;
  const percent = `${Math.round(battery)} %`;
  if (battery < LOW_BATTERY) return <Badge tone="bad">{`${percent} low`}</Badge>;
  return <Badge tone={battery < 50 ? 'warning' : 'good'}>{percent}</Badge>;
}
