import { Badge, type BadgeTone } from '../../components/badge';

const LOOKS: Record<string, { tone: BadgeTone; text: string }> = {
  ACTIVE: { tone: 'good', text: 'Active' },
  INACTIVE: { tone: 'bad', text: 'Inactive' },
  REGISTERING: { tone: 'info', text: 'Registering' },
  NOT_REGISTERED: { tone: 'neutral', text: 'Not registered' },
};

/** A gateway's connectivity_status (docs/gateways.md) in words. */
export function ConnectivityBadge({ status }: { status: string }) {
  const look = LOOKS[status] ?? { tone: 'neutral' as const, text: status };
  return <Badge tone={look.tone}>{look.text}</Badge>;
}
