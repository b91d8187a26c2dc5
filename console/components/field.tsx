import { useId } from 'preact/hooks';

interface Props {
  label: string;
  value: string;
  onValue: (value: string) => void;
  type?: 'text' | 'email' | 'password' | 'search' | 'url' | 'number';
  /** A sentence under the field (what it wants), tied to it by aria-describedby. */
  hint?: string;
  autocomplete?: string;
  required?: boolean;
  maxLength?: number;
  autofocus?: boolean;
  spellcheck?: boolean;
  placeholder?: string;
  /** The id of a `<datalist>` of values to suggest. */
  list?: string;
}

/** A labelled text field: the label names it for screen readers and tests (`getByLabel('Email')`). */
export function Field({ label, value, onValue, hint, type = 'text', ...rest }: Props) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        {...rest}
        id={id}
        // preact's types check the ARIA role per input type, which a union of types defeats.
        type={type as 'text'}
        value={value}
        onInput={(event) => onValue(event.currentTarget.value)}
        aria-describedby={hint ? `${id}-hint` : undefined}
      />
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
    </div>
  );
}
