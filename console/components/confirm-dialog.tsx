import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { Button } from './button';
import { Dialog } from './dialog';
import { ErrorMessage } from './error-message';

interface Props {
  title: string;
  children: ComponentChildren;
  /** The name of the button that does it (`Revoke`, `Delete`). */
  confirm: string;
  /** Does it; the dialog stays open showing the API's details if it fails. */
  onConfirm: () => Promise<void>;
  onClose: () => void;
}

/** Asks before something that cannot be undone (revoke, delete); Cancel has the focus first. */
export function ConfirmDialog({ title, children, confirm, onConfirm, onClose }: Props) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await onConfirm();
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };
  return (
    <Dialog title={title} onClose={onClose}>
      <div class="dialog-body">{children}</div>
      <ErrorMessage error={error} />
      <div class="actions">
        <Button autofocus onClick={onClose}>
          Cancel
        </Button>
        <Button kind="danger" busy={busy} onClick={run}>
          {confirm}
        </Button>
      </div>
    </Dialog>
  );
}
