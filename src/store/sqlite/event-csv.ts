import { isUtf8 } from 'node:buffer';
import { csvField, FORMULA_START_CODES, QUOTED_CODES, type CellMode } from '../../domain/csv.js';
import { EVENT_COLUMNS, REAL_COLUMNS, type EventColumn } from '../../domain/events.js';
import type { CsvChunk } from '../ports/index.js';

/**
 * Export chunks written by SQLite, one value per read: handing each value to V8 was most of an
 * export's time (bench/README.md "export"). Each cell sits behind a tag byte that never occurs in
 * UTF-8; csvChunkOf turns the tags into commas and CRLFs in place and rewrites the cells SQL leaves
 * to JavaScript. Unexpected bytes (text that is not UTF-8) make it answer undefined, and the chunk is
 * written from raw rows: the same bytes either way.
 */

/** Starts every cell after the first of a text column. */
const TEXT_CELL = 0xff;
/** Starts every cell of a number column. */
const NUMBER_CELL = 0xfe;
/** First byte of a number cell that JavaScript writes: `%!.17g` text follows (it reads back exactly). */
const JAVASCRIPT_NUMBER = 0xfd;
/** Ends every record, with RECORD_END_2: two bytes, as the CRLF they become. */
const RECORD_END = 0xfc;
const RECORD_END_2 = 0xfb;
/** The lowest tag byte: bytes below it are cell content. */
const LOWEST_TAG = 0xfb;

const COMMA = 0x2c;
const CR = 0x0d;
const LF = 0x0a;

/** The largest integer that a double holds exactly, and so JavaScript writes with all its digits. */
const EXACT = Number.MAX_SAFE_INTEGER;

function isNumberColumn(column: EventColumn): boolean {
  return REAL_COLUMNS.has(column) || column === 'created';
}

/**
 * A number cell's content as JavaScript's String() writes the value: SQL writes a whole number up
 * to 2^53 as an integer and a fraction whose 15 significant digits read back as the same double
 * in fixed notation (where `%.15g` and JavaScript agree: 1e-4 <= |x| < 1e15); any other value goes
 * to JavaScript as `%!.17g`, which reads back exactly. `created` is an INTEGER (STRICT table).
 */
function numberContent(column: EventColumn): string {
  const inRange = `${column} BETWEEN -${EXACT} AND ${EXACT}`;
  const toJavaScript = `concat(x'FD', printf('%!.17g', ${column}))`;
  if (column === 'created') return `iif(${inRange}, ${column}, ${toJavaScript})`;
  return `CASE WHEN ${column} IS NULL THEN NULL
    WHEN ${column} = CAST(${column} AS INTEGER) AND ${inRange} THEN CAST(${column} AS INTEGER)
    WHEN (${column} >= 0.0001 OR ${column} <= -0.0001) AND ${column} < 1e15 AND ${column} > -1e15
      AND CAST(printf('%.15g', ${column}) AS REAL) = ${column} THEN printf('%.15g', ${column})
    ELSE ${toJavaScript} END`;
}

/** One event's record: its cells in EVENT_COLUMNS order, each after the first behind its tag, then the record's end. */
export const CSV_RECORD = `concat(${EVENT_COLUMNS.map((column, i) => {
  const content = isNumberColumn(column) ? numberContent(column) : column;
  return i === 0 ? content : `${isNumberColumn(column) ? "x'FE'" : "x'FF'"}, ${content}`;
}).join(', ')}, x'FCFB')`;

/** The select list over a subquery of `record`s: their bytes joined, and their count. */
export const CSV_RECORDS = `CAST(group_concat(record, '') AS BLOB), count(*)`;

/** The tag that starts each column's cells (the first column's cells start a record, untagged). */
const TAGS = EVENT_COLUMNS.map((column) => (isNumberColumn(column) ? NUMBER_CELL : TEXT_CELL));
const LAST_COLUMN = EVENT_COLUMNS.length - 1;
const ID_COLUMN = EVENT_COLUMNS.indexOf('id');
const CREATED_COLUMN = EVENT_COLUMNS.indexOf('created');

/**
 * The chunk of a read of CSV_RECORDS, text cells as `cells` says; undefined when its bytes are
 * not as CSV_RECORD writes them from UTF-8 text (the caller then writes the chunk from raw rows).
 * Works in the read's own buffer: tags become commas and CRLFs in place, and only when cells are
 * rewritten is the chunk copied once, with them.
 */
export function csvChunkOf(row: [Buffer | null, number], cells: CellMode): CsvChunk | undefined {
  const [bytes, count] = row;
  if (bytes === null || count === 0) return { csv: Buffer.alloc(0), count: 0 };
  const safe = cells === 'safe';
  const length = bytes.length;
  // The cells that JavaScript writes: where each starts and ends in `bytes`, and its text.
  const rewrites: { start: number; end: number; text: string }[] = [];
  let at = 0;
  let column = 0;
  let records = 0;
  let recordStart = 0;
  let last = { recordStart: 0, idEnd: 0, createdStart: 0, createdEnd: 0 };
  let idEnd = 0;
  let createdStart = 0;
  let createdEnd = 0;
  while (at < length) {
    const start = at;
    const javaScriptNumber = bytes[at] === JAVASCRIPT_NUMBER;
    if (javaScriptNumber) {
      if (TAGS[column] !== NUMBER_CELL) return undefined;
      at++;
    }
    let quoted = false;
    let byte = 0;
    for (; at < length; at++) {
      byte = bytes[at]!;
      if (byte >= LOWEST_TAG) break;
      if (QUOTED_CODES[byte] === 1) quoted = true;
    }
    if (at === length) return undefined; // every record ends with its two bytes
    if (javaScriptNumber) {
      rewrites.push({ start, end: at, text: csvField(javaScriptNumberOf(bytes.toString('latin1', start + 1, at))) });
      bytes[start] = 0x30; // so that the UTF-8 check below passes over the cell it replaces
    } else if (TAGS[column] === TEXT_CELL && (quoted || (safe && at > start && FORMULA_START_CODES[bytes[start]!] === 1))) {
      rewrites.push({ start, end: at, text: csvField(bytes.toString('utf8', start, at), !safe) });
    }
    if (column === ID_COLUMN) idEnd = at;
    else if (column === CREATED_COLUMN) {
      createdStart = start;
      createdEnd = javaScriptNumber ? -1 : at;
    }
    if (byte === RECORD_END) {
      if (column !== LAST_COLUMN || bytes[at + 1] !== RECORD_END_2) return undefined;
      bytes[at] = CR;
      bytes[at + 1] = LF;
      at += 2;
      column = 0;
      records++;
      last = { recordStart, idEnd, createdStart, createdEnd };
      recordStart = at;
    } else {
      if (column === LAST_COLUMN || byte !== TAGS[column + 1]) return undefined;
      bytes[at] = COMMA;
      at++;
      column++;
    }
  }
  // Text that is not UTF-8 reads as U+FFFD in JavaScript: the raw rows write it so.
  if (records !== count || column !== 0 || !isUtf8(bytes)) return undefined;
  // A created beyond 2^53 (JavaScript writes it rounded) is no time of ours: the raw rows key the chunk.
  if (last.createdEnd < 0) return undefined;
  const key = { created: Number(bytes.toString('latin1', last.createdStart, last.createdEnd)), id: bytes.toString('utf8', last.recordStart, last.idEnd) };
  return { csv: rewrites.length ? withRewrites(bytes, rewrites) : bytes, count, last: key };
}

/** The bytes with the cells replaced by their texts, in one new buffer. */
function withRewrites(bytes: Buffer, rewrites: { start: number; end: number; text: string }[]): Buffer {
  let size = bytes.length;
  for (const { start, end, text } of rewrites) size += Buffer.byteLength(text) - (end - start);
  const csv = Buffer.allocUnsafe(size);
  let from = 0;
  let to = 0;
  for (const { start, end, text } of rewrites) {
    to += bytes.copy(csv, to, from, start);
    to += csv.write(text, to);
    from = end;
  }
  bytes.copy(csv, to, from);
  return csv;
}

/** The value of `%!.17g` text (SQLite writes infinities `Inf` and `-Inf`). */
function javaScriptNumberOf(text: string): number {
  if (text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  return Number(text);
}
