import type { CommandStatus } from '../../../../src/client/commands';
import { Badge, type BadgeTone } from '../../../components/badge';

const LOOKS: Record<CommandStatus, { tone: BadgeTone; text: string }> = {
  QUEUED: { tone: 'neutral', text: 'Queued' },
  DELIVERED: { tone: 'info', text: 'Delivered' },
  SUCCEEDED: { tone: 'good', text: 'Succeeded' },
  FAILED: { tone: 'bad', text: 'Failed' },
  EXPIRED: { tone: 'warning', text: 'Expired' },
  CANCELED: { tone: 'neutral', text: 'Canceled' },
};

/** A command's state (docs/commands.md "States") in words. */
export function CommandStatusBadge({ status }: { status: CommandStatus }) {
  const look = LOOKS[status] ?? { tone: 'neutral' as const, text: status };
  return <Badge tone={look.tone}>{look.text}</Badge>;
}
