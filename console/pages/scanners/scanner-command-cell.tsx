import type { Command } from '../../../src/client/commands';
import type { Device } from '../../../src/client/devices';
import { Button } from '../../components/button';
import { CommandStatusBadge } from '../gateways/commands/command-status-badge';

interface Props {
  device: Device;
  /** The last command sent to it from this page, followed live. */
  command: Command | undefined;
  onSend: (device: Device) => void;
}

/** A scanner's `Command` cell: the button that opens the form, and the state of the command sent last. */
export function ScannerCommandCell({ device, command, onSend }: Props) {
  // Commands go through a gateway: one never heard through any has none to go through.
  if (device.last_gateway_id === null) return <span class="muted">no gateway</span>;
  return (
    <div class="row-actions scanner-command">
      <Button aria-label={`Send command to ${device.device_id}`} onClick={() => onSend(device)}>
        Send command
      </Button>
      {command && (
        <span class="command-state" aria-live="polite">
          {`${command.name} `}
          <CommandStatusBadge status={command.status} />
        </span>
      )}
    </div>
  );
}
