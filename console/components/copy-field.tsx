import { useId, useRef, useState } from 'preact/hooks';
import { Button } from './button';

/** Puts the text on the clipboard: the Clipboard API where the page may use it (HTTPS, loopback), else the selection. */
async function copy(text: string, input: HTMLTextAreaElement): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Plain HTTP on the LAN is not a secure context: no Clipboard API there.
    input.select();
    return document.execCommand('copy');
  }
}

/** A value to copy (a URL, a token): read-only text, wrapped to be read whole, with a `Copy <label>` button beside it. */
export function CopyField({ label, value }: { label: string; value: string }) {
  const id = useId();
  const input = useRef<HTMLTextAreaElement>(null);
  const [copied, setCopied] = useState<boolean>();
  return (
    <div class="field copy-field">
      <label for={id}>{label}</label>
      <div class="copy-row">
        <textarea id={id} ref={input} readOnly rows={1} value={value} spellcheck={false} onFocus={(event) => event.currentTarget.select()} />
        <Button onClick={async () => setCopied(await copy(value, input.current!))}>Copy {label.charAt(0).toLowerCase() + label.slice(1)}</Button>
      </div>
      <p class="hint" role="status">
        {copied === undefined ? '' : copied ? 'Copied.' : 'Select the text and copy it (Ctrl+C).'}
      </p>
    </div>
  );
}
