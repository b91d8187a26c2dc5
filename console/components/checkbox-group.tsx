interface Props {
  /** Names the group (a `<fieldset>`'s `<legend>`). */
  legend: string;
  /** The values offered; each is its checkbox's label too (role and permission names are what the API and docs say). */
  options: readonly string[];
  selected: readonly string[];
  onChange: (selected: string[]) => void;
}

/** Checkboxes for a set of values (roles, permissions); the chosen ones come back in the order offered. */
export function CheckboxGroup({ legend, options, selected, onChange }: Props) {
  const toggle = (value: string, on: boolean) => onChange(options.filter((option) => (option === value ? on : selected.includes(option))));
  return (
    <fieldset class="choice-group">
      <legend>{legend}</legend>
      {options.map((option) => (
        <label key={option} class="choice">
          <input type="checkbox" checked={selected.includes(option)} onChange={(event) => toggle(option, event.currentTarget.checked)} />
          <span class="mono">{option}</span>
        </label>
      ))}
    </fieldset>
  );
}
