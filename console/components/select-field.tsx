import { useId } from 'preact/hooks';

export interface SelectOption {
  value: string;
  label: string;
}

interface Props {
  label: string;
  value: string;
  options: readonly SelectOption[];
  onValue: (value: string) => void;
  /** A sentence under the field, tied to it by aria-describedby. */
  hint?: string;
}

/** A labelled `<select>`: the label names it for screen readers and tests (`getByLabel('Role')`). */
export function SelectField({ label, value, options, onValue, hint }: Props) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(event) => onValue(event.currentTarget.value)} aria-describedby={hint ? `${id}-hint` : undefined}>
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
    </div>
  );
}
