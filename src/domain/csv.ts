/**
 * RFC 4180 CSV, the format of event exports: records ended by CRLF, a field quoted when it holds a
 * comma, a quote, CR or LF, quotes inside doubled, null an empty field. Written by hand because
 * csv-stringify is too slow for the export's target (docs/events.md "Exports"); a test checks both
 * write the same bytes. Text a spreadsheet would take for a formula is defused unless cells are
 * `raw`.
 */

/** How text cells are written: `safe` defuses formulas with a leading `'`, `raw` writes them as stored. */
export type CellMode = 'safe' | 'raw';

/** The values of `cells` (query parameter, task body field), the default first. */
export const CELL_MODES: readonly CellMode[] = ['safe', 'raw'];

/** The characters that make a field quoted: comma, quote, CR, LF. */
const QUOTED_CHARACTERS = ',"\r\n';
const NEEDS_QUOTES = new RegExp(`[${QUOTED_CHARACTERS}]`);
/** The characters that make a spreadsheet read a text as a formula when it begins with one (OWASP "CSV Injection"). */
const FORMULA_STARTS = '=+-@\t\r';

/** A table of the character codes below 256: 1 for each character of `characters`. */
function codeTable(characters: string): Uint8Array {
  const table = new Uint8Array(256);
  for (const character of characters) table[character.charCodeAt(0)] = 1;
  return table;
}

/**
 * 1 for each character (and so UTF-8 byte) that starts a formula, or that makes a field quoted;
 * the SQLite store's export writer reads the bytes of cells with them (all are ASCII).
 */
export const FORMULA_START_CODES = codeTable(FORMULA_STARTS);
export const QUOTED_CODES = codeTable(QUOTED_CHARACTERS);

/**
 * Whether a spreadsheet reads the text as a formula: it begins with `=`, `+`, `-`, `@`, tab or CR.
 * A table lookup rather than a regular expression: this runs for every text cell of an export.
 */
export function startsFormula(text: string): boolean {
  // NaN for '' and codes above 255 read as undefined: not a formula.
  return FORMULA_START_CODES[text.charCodeAt(0)] === 1;
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
