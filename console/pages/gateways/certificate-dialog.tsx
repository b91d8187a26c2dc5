import { useEffect, useState } from 'preact/hooks';
import type { GatewayCertificate } from '../../../src/client/certificates';
import type { Gateway } from '../../../src/client/gateways';
import { Badge } from '../../components/badge';
import { Button } from '../../components/button';
import { Dialog } from '../../components/dialog';
import { ErrorMessage } from '../../components/error-message';
import { api, customerPath } from '../../lib/api';
import { dateTime } from '../../lib/time';

const STATUS_TONES = { pending: 'info', active: 'good', revoked: 'bad' } as const;

interface Props {
  gateway: Gateway;
  /** Re-provisions the gateway (offered when its certificate is revoked). */
  onReprovision: (gateway: Gateway) => void;
  onClose: () => void;
}

/** The gateway's current certificate (`GET .../certificate`): status, serial, validity. */
export function CertificateDialog({ gateway, onReprovision, onClose }: Props) {
  const [certificate, setCertificate] = useState<GatewayCertificate>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    api.get<GatewayCertificate>(customerPath(`/gateways/${encodeURIComponent(gateway.id)}/certificate`)).then(setCertificate, setError);
  }, [gateway.id]);
  return (
    <Dialog title={`Certificate of ${gateway.name}`} onClose={onClose}>
      <ErrorMessage error={error} />
      {!certificate && !error && <p class="loading">Loading…</p>}
      {certificate && (
        <dl class="details">
          <dt>Status</dt>
          <dd>
            <Badge tone={STATUS_TONES[certificate.status]}>{certificate.status}</Badge>
          </dd>
          <dt>Serial</dt>
          <dd class="mono">{certificate.serial}</dd>
          <dt>Valid from</dt>
          <dd>{dateTime(certificate.not_before)}</dd>
          <dt>Valid until</dt>
          <dd>{dateTime(certificate.not_after)}</dd>
        </dl>
      )}
      <div class="actions">
        {certificate?.status === 'revoked' && <Button onClick={() => onReprovision(gateway)}>Reprovision</Button>}
        <Button kind="primary" autofocus onClick={onClose}>
          Close
        </Button>
      </div>
    </Dialog>
  );
}
