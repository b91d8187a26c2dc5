import type { Command } from '../../../src/client/commands';
import type { Device } from '../../../src/client/devices';
import { Dialog } from '../../components/dialog';
import { CommandForm } from '../gateways/commands/command-form';

interface Props {
  device: Device & { last_gateway_id: string };
  gatewayName: string;
  onSent: (command: Command) => void;
  onClose: () => void;
}

/** Sends a command to a scanner through the gateway of its newest event (the gateway page's form, the scanner chosen). */
export function ScannerCommandDialog({ device, gatewayName, onSent, onClose }: Props) {
  return (
    <Dialog title={`Send a command to ${device.device_id}`} onClose={onClose}>
      <p class="dialog-body">
        Through the gateway of its newest event, <strong>{gatewayName}</strong>.
      </p>
      <CommandForm gatewayId={device.last_gateway_id} deviceId={device.device_id} onSent={onSent} onCancel={onClose} />
    </Dialog>
  );
}
