import { EVENT_COLUMNS, REAL_COLUMNS } from '../../domain/events.js';

/**
 * An event's JSON as the SQLite store writes it (store/sqlite/event-json.ts: its members,
 * absent ones left out), so that both stores answer with the same bytes, and SQLite's ingest
 * writer hands the events it stored to the server's thread as they would be read back. Strings: SQLite escapes `"`, `\` and
 * the control characters as JSON.stringify does (`\b \t \n \f \r`, else `\u00xx`) and writes
 * every other character as it is; stored text is well-formed, so JSON.stringify is the same.
 * Numbers: see realJson.
 */

/** The kind of each column: REAL (double precision here), `created` (an integer) or text. */
const TEXT = 0;
const INTEGER = 1;
const REAL = 2;
const KIND = EVENT_COLUMNS.map((column) => (REAL_COLUMNS.has(column) ? REAL : column === 'created' ? INTEGER : TEXT));
/** Each member's opening as the first of the object and after another: one concatenation per member. */
const FIRST_MEMBER = EVENT_COLUMNS.map((column) => `{"${column}":`);
const NEXT_MEMBER = EVENT_COLUMNS.map((column) => `,"${column}":`);

/**
 * One event's JSON from its values in EVENT_COLUMNS order, from `start` on (a stored row's values
 * begin with its customer). `plain`: no text holds a character JSON escapes (domain/events.ts
 * plainTexts), so each is written between quotes as it is. SQLite's ingest writer makes one per
 * event it hands over, on the thread ingest waits on: a string per member, no more.
 */
export function eventJson(row: readonly unknown[], start = 0, plain = false): string {
  let json = '';
  for (let i = 0; i < KIND.length; i++) {
    const value = row[start + i];
    if (value === null || value === undefined) continue;
    const kind = KIND[i];
    const text = kind === TEXT ? (plain ? `"${value as string}"` : JSON.stringify(value)) : kind === INTEGER ? String(value) : realJson(value as number);
    json += (json === '' ? FIRST_MEMBER[i] : NEXT_MEMBER[i]) + text;
  }
  return json === '' ? '{}' : `${json}}`;
}

/**
 * Events' JSON as eventJson writes it, written as UTF-8 straight into one buffer, separated by
 * commas: SQLite's ingest writer hands a commit's events over so (store/shared/committed-events.ts).
 * No string per event: the concatenated strings were flattened and encoded again, and their
 * pieces were the writer thread's garbage.
 */
export class EventJsonBytes {
  /** The buffer written into, reused by the next writer once this one's bytes are taken (a commit's events are packed one after the other). */
  private static spare: Buffer | undefined;
  private bytes = EventJsonBytes.spare ?? Buffer.allocUnsafeSlow(64 * 1024);
  private length = 0;

  constructor() {
    EventJsonBytes.spare = undefined;
  }

  /** Appends one event's JSON (its values from `start`, `plain` as for eventJson), after a comma unless it is the first; returns where its bytes end. */
  append(row: readonly unknown[], start: number, plain: boolean): number {
    // Written with local variables and loops, not a call per piece: this runs for every event ingest hands over.
    let bytes = this.bytes;
    let at = this.length;
    if (at > 0) bytes[at++] = COMMA;
    let first = true;
    for (let i = 0; i < KIND.length; i++) {
      const value = row[start + i];
      if (value === null || value === undefined) continue;
      const kind = KIND[i];
      const scale = kind === TEXT ? 0 : shortScale(value as number);
      if (scale !== 0) {
        // Written digit by digit: the text realJson would make, without the string.
        const opening = first ? FIRST_BYTES[i]! : NEXT_BYTES[i]!;
        first = false;
        if (at + opening.length + 24 > bytes.length) bytes = this.grow(at, opening.length + 24);
        for (let j = 0; j < opening.length; j++) bytes[at + j] = opening[j]!;
        at = writeShortNumber(bytes, at + opening.length, value as number, scale);
        continue;
      }
      const quoted = kind === TEXT && plain;
      const opening = quoted ? (first ? FIRST_QUOTED[i]! : NEXT_QUOTED[i]!) : first ? FIRST_BYTES[i]! : NEXT_BYTES[i]!;
      const text = quoted ? (value as string) : kind === TEXT ? JSON.stringify(value) : kind === INTEGER ? String(value) : realJson(value as number);
      first = false;
      // A UTF-16 unit is at most 3 bytes of UTF-8: room for the worst case, without measuring.
      if (at + opening.length + text.length * 3 + 3 > bytes.length) bytes = this.grow(at, opening.length + text.length * 3 + 3);
      for (let j = 0; j < opening.length; j++) bytes[at + j] = opening[j]!;
      at += opening.length;
      let j = 0;
      for (; j < text.length; j++) {
        const code = text.charCodeAt(j);
        if (code >= 0x80) break;
        bytes[at + j] = code;
      }
      // Past ASCII, the rest encoded at once.
      at += j < text.length ? j + bytes.write(text.slice(j), at + j) : j;
      if (quoted) bytes[at++] = QUOTE;
    }
    if (first) bytes[at++] = OPEN;
    bytes[at++] = CLOSE;
    this.length = at;
    return at;
  }

  /** The bytes written, in a buffer of their own size (not Node's shared pool: another thread may take its memory); the writer is done. */
  take(): Buffer {
    const taken = Buffer.allocUnsafeSlow(this.length);
    this.bytes.copy(taken, 0, 0, this.length);
    EventJsonBytes.spare = this.bytes;
    // Appending after this writes into a buffer of its own again, never the spare another writer may hold.
    this.bytes = Buffer.alloc(0);
    this.length = 0;
    return taken;
  }

  /** A larger buffer with the bytes written so far (and room for the 2 bytes that close an event). */
  private grow(length: number, more: number): Buffer {
    const grown = Buffer.allocUnsafeSlow(Math.max(this.bytes.length * 2, length + more + 2));
    this.bytes.copy(grown, 0, 0, length);
    this.bytes = grown;
    return grown;
  }
}

/**
 * How writeShortNumber writes a number realJson writes as String(value): 1 a safe integer, 10 or
 * 100 a fraction of one or two decimals below 1e11 (13 significant digits at most, as
 * shortFraction takes); 0 not at all. Such a fraction is the double nearest to its decimal
 * (n / 10 or n / 100 gives it back), and no shorter decimal lies as near below 2^53, so its
 * shortest text is that decimal.
 */
function shortScale(value: number): number {
  if (Number.isSafeInteger(value)) return 1;
  if (!(Math.abs(value) < 1e11)) return 0;
  if (Number.isInteger(value * 10) && (value * 10) / 10 === value) return 10;
  return Number.isInteger(value * 100) && (value * 100) / 100 === value ? 100 : 0;
}

/** Writes a number of shortScale `scale` as String(value) writes it; returns where its text ends. */
function writeShortNumber(bytes: Buffer, at: number, value: number, scale: number): number {
  if (scale === 1) return writeInteger(bytes, at, value);
  if (value < 0) {
    bytes[at++] = MINUS;
    value = -value;
  }
  // value * 10 is the whole number of tenths exactly (shortScale checked it), so times 10 too.
  let hundredths = scale === 10 ? value * 10 * 10 : value * 100;
  const whole = Math.floor(hundredths / 100);
  at = writeInteger(bytes, at, whole);
  bytes[at++] = DOT;
  hundredths -= whole * 100;
  const tenths = Math.floor(hundredths / 10);
  bytes[at++] = ZERO + tenths;
  // The second decimal only when it is not 0: String(31.5) is 31.5.
  if (hundredths !== tenths * 10) bytes[at++] = ZERO + (hundredths - tenths * 10);
  return at;
}

/** Writes a safe integer's decimal digits (as String(value), -0 as 0) at `at`; returns where they end. */
function writeInteger(bytes: Buffer, at: number, value: number): number {
  if (value < 0) {
    bytes[at++] = MINUS;
    value = -value;
  }
  let end = at + 1;
  for (let power = 10; power <= value; power *= 10) end++;
  // Below 2^53 the quotient by 10 rounds to the integer it should: the digits come out exact.
  for (let k = end - 1; k > at; k--) {
    const rest = Math.floor(value / 10);
    bytes[k] = ZERO + (value - rest * 10);
    value = rest;
  }
  bytes[at] = ZERO + value;
  return end;
}

const COMMA = 0x2c;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const QUOTE = 0x22;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const FIRST_BYTES = FIRST_MEMBER.map((opening) => Buffer.from(opening));
const NEXT_BYTES = NEXT_MEMBER.map((opening) => Buffer.from(opening));
/** The openings of a text written as it is: the quote that opens it too. */
const FIRST_QUOTED = FIRST_MEMBER.map((opening) => Buffer.from(`${opening}"`));
const NEXT_QUOTED = NEXT_MEMBER.map((opening) => Buffer.from(`${opening}"`));

const TWO_TO_63 = 2 ** 63;

/**
 * The common case at a fraction of the cost: a value between 1e-3 and 1e17 whose shortest text
 * (JavaScript's) has at most 13 significant digits. Its 18-digit form is those digits then 000 (or
 * one less then 999), so SQLite shortens it to them too, in the same fixed notation. (Below 1e-3
 * SQLite's 18 digits can be off by more, and it then writes 17 digits.)
 */
function shortFraction(value: number): string | undefined {
  const magnitude = Math.abs(value);
  if (!(magnitude >= 1e-3 && magnitude < 1e17)) return undefined;
  const text = String(value);
  let digits = 0;
  let leading = true;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x30 || code > 0x39) continue;
    if (leading && code === 0x30) continue;
    leading = false;
    if (++digits > 13) return undefined;
  }
  return text;
}

/**
 * A REAL as the SQLite store writes it: a whole value that fits in 64 bits as that integer
 * (the store casts those), any other as SQLite's `%!0.17g` (json_quote): 17 significant digits,
 * or fewer when digits 14-16 of the value's 18-digit decimal form are 000 or 999 and the shorter
 * text reads back as the same double; exponent form below 1e-4 and from 1e17 on, with at least
 * two exponent digits and `.0` when there is no fraction (`1.0e+21`).
 */
export function realJson(value: number): string {
  if (Number.isInteger(value) && value >= -TWO_TO_63 && value < TWO_TO_63) {
    return Number.isSafeInteger(value) ? String(value === 0 ? 0 : value) : BigInt(value).toString();
  }
  const shortest = shortFraction(value);
  if (shortest !== undefined) return shortest;
  if (!Number.isFinite(value)) return Number.isNaN(value) ? 'null' : value > 0 ? '9.0e+999' : '-9.0e+999';
  const negative = value < 0;
  const r = Math.abs(value);
  // 18 significant digits, as SQLite's sqlite3Fp2Convert10 gives them; value = digits × 10^exp.
  const [mantissa, exponent] = r.toExponential(17).split('e') as [string, string];
  let digits = mantissa.replace('.', '');
  let n = digits.length; // 18
  let iDP = Number(exponent) + 1;
  const exp = iDP - n;
  let round = 17;
  const z = digits;
  if (z[15] === '9' && z[14] === '9') {
    let jj = 14;
    while (jj > 0 && z[jj - 1] === '9') jj--;
    const v2 = jj === 0 ? 1n : BigInt(z.slice(0, jj)) + 1n;
    if (r === Number(`${v2}e${exp + n - jj}`)) round = jj + 1;
  } else if (iDP >= n || (z[15] === '0' && z[14] === '0' && z[13] === '0')) {
    let jj = 13;
    while (z[jj - 1] === '0') jj--;
    if (r === Number(`${z.slice(0, jj)}e${exp + n - jj}`)) round = jj + 1;
  }
  // Round the 18 digits to `round` (half up on the decimal digits, as SQLite does).
  const kept = Array.from(digits.slice(0, round), Number);
  if (digits.charCodeAt(round) >= 0x35) {
    let j = round - 1;
    for (;;) {
      kept[j]!++;
      if (kept[j]! <= 9) break;
      kept[j] = 0;
      if (j === 0) {
        kept.unshift(1);
        iDP++;
        break;
      }
      j--;
    }
  }
  digits = kept.join('').replace(/0+$/, '');
  n = digits.length;
  const sign = negative ? '-' : '';
  const e = iDP - 1;
  if (e < -4 || e > 16) {
    const fraction = digits.slice(1) || '0';
    const magnitude = Math.abs(e);
    return `${sign}${digits[0]}.${fraction}e${e < 0 ? '-' : '+'}${magnitude < 10 ? '0' : ''}${magnitude}`;
  }
  if (iDP <= 0) return `${sign}0.${'0'.repeat(-iDP)}${digits}`;
  if (iDP >= n) return `${sign}${digits}${'0'.repeat(iDP - n)}.0`;
  return `${sign}${digits.slice(0, iDP)}.${digits.slice(iDP)}`;
}
