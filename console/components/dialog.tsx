import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';

interface Props {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  /** A wider dialog (the provisioning code). */
  wide?: boolean;
}

/**
 * A modal dialog on the native `<dialog>`: the page behind it is inert (focus stays inside),
 * Escape closes it, and focus returns to where it was when it opened.
 */
export function Dialog({ title, onClose, children, wide = false }: Props) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const close = useRef(onClose);
  close.current = onClose;
  // Where the focus was when the owner opened it (its first render), not when the effect runs a
  // frame later: by then a busy page may have moved the focus, and it is not given back.
  const [opener] = useState(() => document.activeElement as HTMLElement | null);
  useEffect(() => {
    const dialog = ref.current!;
    dialog.showModal();
    // Escape fires `cancel`: the owner decides (it unmounts the dialog).
    const onCancel = (event: Event) => {
      event.preventDefault();
      close.current();
    };
    dialog.addEventListener('cancel', onCancel);
    return () => {
      dialog.removeEventListener('cancel', onCancel);
      dialog.close();
      if (opener?.isConnected) opener.focus();
    };
  }, []);
  return (
    <dialog ref={ref} class={wide ? 'dialog wide' : 'dialog'} aria-labelledby={titleId}>
      <h2 id={titleId}>{title}</h2>
      {children}
    </dialog>
  );
}
