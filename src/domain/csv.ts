/**
 * RFC 4180 CSV, the format of event exports: fields separated by commas, records ended by CRLF,
 * a field quoted when it holds a comma, a quote, CR or LF, quotes inside doubled. Null is an
 * empty field. Written by hand because the export must reach 250,000 rows/s and csv-stringify
 * manages about 150,000 (docs/events.md); a test checks both produce the same bytes.
 *
 * Text that a spreadsheet would take for a formula is defused unless the cells are `raw`
 * (DESIGN.md "Events", docs/events.md "CSV injection").
 */

/** How text cells are written: `safe` defuses formulas with a leading `'`, `raw` writes them as stored. */
export type CellMode = 'safe' | 'raw';

/** The values of `cells` (query parameter, task body field), the default first. */
export const CELL_MODES: readonly CellMode[] = ['safe', 'raw'];

const NEEDS_QUOTES = /[",\r\n]/;

/**
 * Whether a spreadsheet reads the text as a formula: it begins with `=`, `+`, `-`, `@`, tab or CR
 * (OWASP "CSV Injection"). Character codes rather than a regular expression: this runs for every
 * text cell of an export.
 */
export function startsFormula(text: string): boolean {
  const first = text.charCodeAt(0);
  // All six are below 'A' (65), so a cell that starts with a letter is settled by one comparison.
  return first < 65 && (first === 61 || first === 43 || first === 45 || first === 64 || first === 9 || first === 13);
}

/**
 * One field: numbers as JavaScript prints them (a negative number is a number, never a formula),
 * text with a leading `'` when it starts a formula unless `raw`, then quoted when needed.
 */
export function csvField(value: string | number | null | undefined, raw = false): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return String(value);
  const text = raw || !startsFormula(value) ? value : `'${value}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One record with its CRLF terminator; text cells safe unless `cells` is `raw`. */
export function csvRecord(values: readonly (string | number | null | undefined)[], cells: CellMode = 'safe'): string {
  const raw = cells === 'raw';
  let line = '';
  for (let i = 0; i < values.length; i++) line += (i === 0 ? '' : ',') + csvField(values[i], raw);
  return line + '\r\n';
}
