/**
 * What a gateway's message may be, beyond the 256 KiB payload limit of the broker
 * (docs/gateways-mqtt.md "Limits"). Generous for real devices (a message is an event or an array
 * of up to hundreds), tight enough that no message can make validation recurse, allocate or log
 * without bound. Pure: runs in the writer thread.
 */

/** Deepest nesting of arrays and objects a message may have; an event array is 2 deep. */
export const MAX_NESTING = 64;
/** Most elements (events and gateway reports) in one message. */
export const MAX_EVENTS_PER_MESSAGE = 1000;
/** Longest `scan_code`, in characters: the largest 2D codes (QR, Han Xin) hold about 7,800 digits. */
export const MAX_SCAN_CODE_LENGTH = 8192;
/** Longest `scan_decode_symbology`, `device_id` and `device_firmware`, in characters. */
export const MAX_DEVICE_TEXT_LENGTH = 256;

/** The times an event's `created` may name (serve --min-created, --max-created-ahead). */
export interface CreatedWindow {
  /** Earliest `created`, milliseconds since the epoch. */
  earliest: number;
  /** How far past its receipt a `created` may be (device clocks run ahead), milliseconds. */
  aheadMs: number;
}

/** 2000-01-01T00:00:00Z .. receipt + 1 day. */
export const DEFAULT_CREATED_WINDOW: CreatedWindow = { earliest: Date.UTC(2000, 0, 1), aheadMs: 86_400_000 };

/**
 * The largest `aheadMs` serve accepts: a year past now keeps every stored `created` far inside
 * the range the event list can ask for (end_time_millis at most 8.64e15, the last Date).
 */
export const MAX_CREATED_AHEAD_MS = 366 * 86_400_000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
// Byte classes of the scan: 0 is any byte it passes over.
const STRING = 1;
const OPENING = 2;
const CLOSING = 3;
const COMMA = 4;
const CLASS = new Uint8Array(256);
CLASS[QUOTE] = STRING;
CLASS[OPEN_ARRAY] = CLASS[0x7b] = OPENING;
CLASS[0x5d] = CLASS[0x7d] = CLOSING;
CLASS[0x2c] = COMMA;

/** The bounds structureProblem checks; tests give smaller ones. */
export interface StructureLimits {
  depth: number;
  elements: number;
}

const LIMITS: StructureLimits = { depth: MAX_NESTING, elements: MAX_EVENTS_PER_MESSAGE };

/**
 * Why the JSON text is over the limits of nesting or of elements in a top-level array, found by
 * one pass over the bytes that skips strings; undefined when within them. Runs before JSON.parse,
 * so what would overflow a recursion (a validator, a logger) or build thousands of objects is
 * refused before it exists. Text that is not JSON may count wrongly; JSON.parse refuses it anyway.
 */
export function structureProblem(bytes: Buffer, limits: StructureLimits = LIMITS): string | undefined {
  // Most messages hold fewer brackets than the depth limit in all, so neither limit can bite:
  // counted natively (memchr), that settles it for a fraction of the byte-by-byte pass
  // (bench/README.md "ingest-poison"). A top-level array of more elements than that with few
  // brackets (numbers, strings) is refused after parsing.
  if (countUpTo(bytes, 0x7b, limits.depth + 1) + countUpTo(bytes, OPEN_ARRAY, limits.depth + 1) <= limits.depth) return undefined;
  let depth = 0;
  let topArray = false;
  let commas = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    const kind = CLASS[byte];
    if (kind === 0) continue;
    if (kind === STRING) {
      for (i++; i < bytes.length; i++) {
        const inString = bytes[i];
        if (inString === QUOTE || inString === BACKSLASH) {
          if (inString === QUOTE) break;
          i++;
        }
      }
    } else if (kind === OPENING) {
      if (depth === 0) topArray = byte === OPEN_ARRAY;
      if (++depth > limits.depth) return `payload nests arrays or objects deeper than ${limits.depth} levels`;
    } else if (kind === CLOSING) depth--;
    else if (depth === 1 && topArray) commas++;
  }
  if (topArray && commas >= limits.elements) return tooManyEvents(commas + 1, limits.elements);
  return undefined;
}

/** The reason for an array of `count` elements. */
export const tooManyEvents = (count: number, limit = MAX_EVENTS_PER_MESSAGE) => `a message holds at most ${limit} events, got an array of ${count}`;

/** How often `byte` occurs in `bytes`, counting no further than `most`. */
function countUpTo(bytes: Buffer, byte: number, most: number): number {
  let count = 0;
  for (let at = bytes.indexOf(byte); at !== -1 && count < most; at = bytes.indexOf(byte, at + 1)) count++;
  return count;
}
