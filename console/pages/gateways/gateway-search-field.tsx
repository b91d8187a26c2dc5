import { useId } from 'preact/hooks';

/** The board's search box: filters as the user types. */
export function GatewaySearch({ value, onValue }: { value: string; onValue: (value: string) => void }) {
  const id = useId();
  return (
    <div class="field search">
      <label for={id}>Search</label>
      <input id={id} type="search" value={value} placeholder="Name, station or use case" autocomplete="off" onInput={(event) => onValue(event.currentTarget.value)} aria-describedby={`${id}-hint`} />
      <p class="visually-hidden" id={`${id}-hint`}>
        Shows the gateways whose name, station or use case contains every word typed.
      </p>
    </div>
  );
}
