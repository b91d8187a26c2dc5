import type { ComponentChildren } from 'preact';

/** A column: its header, and what a row shows in it. */
export interface Column<T> {
  header: string;
  cell: (row: T) => ComponentChildren;
  /** The row's name (the first column a screen reader announces): a `<th scope="row">`. */
  rowHeader?: boolean;
  class?: string;
}

interface Props<T> {
  /** Names the table (a visible caption) and its scrolling region. */
  caption: string;
  columns: Column<T>[];
  rows: readonly T[];
  rowKey: (row: T) => string;
  /** Shown in place of the rows when there are none. */
  empty: ComponentChildren;
}

/**
 * A `<table>` with one row per item, scrolling sideways inside its own region on a narrow screen
 * (the region takes focus, so the keyboard scrolls it too). Hold only a page of rows: lists that
 * grow are paged by the caller.
 */
export function Table<T>({ caption, columns, rows, rowKey, empty }: Props<T>) {
  return (
    <div class="table-scroll" role="region" aria-label={caption} tabIndex={0}>
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th scope="col" class={column.class}>
                {column.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td class="empty" colSpan={columns.length}>
                {empty}
              </td>
            </tr>
          ) : (
            rows.map((row) => (
              <tr key={rowKey(row)}>
                {columns.map((column) =>
                  column.rowHeader ? (
                    <th scope="row" class={column.class}>
                      {column.cell(row)}
                    </th>
                  ) : (
                    <td class={column.class}>{column.cell(row)}</td>
                  ),
                )}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}
