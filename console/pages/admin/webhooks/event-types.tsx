import { Fragment } from 'preact';

/** A webhook's event types, a line break allowed between two of them and never inside one (`alert.opened`). */
export function EventTypes({ types }: { types: readonly string[] }) {
  return (
    <>
      {types.map((type, i) => (
        <Fragment key={type}>
          {i > 0 && ', '}
          <span class="mono nowrap">{type}</span>
        </Fragment>
      ))}
    </>
  );
}
