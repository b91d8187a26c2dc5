import { Button } from '../../components/button';
import { CopyField } from '../../components/copy-field';
import { Dialog } from '../../components/dialog';
import type { CreatedApiKey } from './new-api-key-dialog';

/** The key just made, shown this once: the deployment keeps only its hash (docs/api-keys.md). */
export function ApiKeyDialog({ apiKey, onClose }: { apiKey: CreatedApiKey; onClose: () => void }) {
  return (
    <Dialog title={`API key ${apiKey.name}`} onClose={onClose}>
      <div class="dialog-body">
        <p>
          <strong>Copy the key now: it is shown only this once.</strong> Store it as a secret of the script or pipeline (SCANHUB_TOKEN); a lost key cannot be
          shown again, only revoked and replaced.
        </p>
      </div>
      <CopyField label="Key" value={apiKey.key} />
      <div class="actions">
        <Button kind="primary" autofocus onClick={onClose}>
          Done
        </Button>
      </div>
    </Dialog>
  );
}
