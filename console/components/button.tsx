import type { ButtonHTMLAttributes } from 'preact';

export type ButtonKind = 'primary' | 'secondary' | 'danger';

type Props = ButtonHTMLAttributes<HTMLButtonElement> & { kind?: ButtonKind; busy?: boolean };

/** A button of the console: `type="button"` unless said otherwise, disabled (and announced busy) while its action runs. */
export function Button({ kind = 'secondary', busy = false, type = 'button', class: extra, disabled, children, ...rest }: Props) {
  return (
    <button {...rest} type={type} class={`button ${kind}${extra ? ` ${String(extra)}` : ''}`} disabled={Boolean(disabled) || busy} aria-busy={busy || undefined}>
      {children}
    </button>
  );
}
