import type { Command } from '../../../../src/client/commands';
import { Button } from '../../../components/button';
import { Table, type Column } from '../../../components/table';
import { dateTime } from '../../../lib/time';
import { describeParameters } from './command-input';
import { CommandStatusBadge } from './command-status-badge';

interface Props {
  commands: readonly Command[];
  /** Offers Cancel on QUEUED commands (with gateway.command). */
  onCancel?: (command: Command) => void;
  /** The command whose cancel is under way. */
  canceling: string | undefined;
}

/** A time of the command's life, to the second in the reader's locale; a dash while it has not come. */
function Moment({ at }: { at: number | undefined }) {
  if (at === undefined) return <span class="muted">—</span>;
  return <time dateTime={new Date(at).toISOString()}>{dateTime(at)}</time>;
}

/** A gateway's commands, a row each, newest first: what it said, to whom, and how far it got. */
export function CommandTable({ commands, onCancel, canceling }: Props) {
  const columns: Column<Command>[] = [
    { header: 'Command', cell: (c) => c.name, rowHeader: true, class: 'name' },
    // The state next to the name: in sight without scrolling sideways on a narrow screen.
    { header: 'Status', cell: (c) => <CommandStatusBadge status={c.status} /> },
    { header: 'Scanner', cell: (c) => (c.device_id === null ? <span class="muted">the gateway</span> : <span class="mono">{c.device_id}</span>) },
    { header: 'Parameters', cell: (c) => <span class="command-parameters">{describeParameters(c.name, c.parameters)}</span> },
    { header: 'Created', cell: (c) => <Moment at={c.created} />, class: 'nowrap' },
    { header: 'Delivered', cell: (c) => <Moment at={c.delivered_at} />, class: 'nowrap' },
    { header: 'Completed', cell: (c) => <Moment at={c.completed_at} />, class: 'nowrap' },
    { header: 'Details', cell: (c) => c.details ?? '' },
  ];
  if (onCancel) {
    columns.push({
      header: 'Actions',
      cell: (c) =>
        c.status === 'QUEUED' && (
          <Button busy={canceling === c.command_id} onClick={() => onCancel(c)}>
            Cancel
          </Button>
        ),
    });
  }
  return <Table caption="Sent commands" columns={columns} rows={commands} rowKey={(c) => c.command_id} empty="No commands sent to this gateway yet." />;
}
