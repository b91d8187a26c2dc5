import type { Gateway } from '../../../src/client/gateways';
import type { Preparation } from '../../../src/client/provisioning';
import { provisioningCode } from '../../../src/domain/provisioning-code';
import { Button } from '../../components/button';
import { CopyField } from '../../components/copy-field';
import { Dialog } from '../../components/dialog';
import { QrCode } from '../../components/qr-code';

/**
 * The provisioning code of a prepared gateway: the QR code the device scans, and the registration
 * URL and token as text for a device that takes them typed or pasted (docs/gateways.md).
 */
export function ProvisioningDialog({ gateway, preparation, onClose }: { gateway: Gateway; preparation: Preparation; onClose: () => void }) {
  // The server knows its public URL; one that does not say it is reached at this page's origin.
  const registrationUrl = preparation.registration_url ?? `${location.origin}${preparation.registration_path}`;
  return (
    <Dialog title={`Provision ${gateway.name}`} onClose={onClose} wide>
      <div class="provisioning">
        <QrCode text={provisioningCode(registrationUrl, preparation.token)} label="Provisioning code" />
        <div class="provisioning-text">
          <p>Scan the code with the gateway, or enter the registration URL and token on it. The token works once, within 24 hours.</p>
          <CopyField label="Registration URL" value={registrationUrl} />
          <CopyField label="Token" value={preparation.token} />
        </div>
      </div>
      <div class="actions">
        <Button kind="primary" autofocus onClick={onClose}>
          Done
        </Button>
      </div>
    </Dialog>
  );
}
