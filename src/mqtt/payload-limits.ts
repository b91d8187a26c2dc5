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
// Byte classes of the scan: 0 is any byte it passes over.
const STRING = 1;
const OPENING = 2;
const CLOSING = 3;
const CLASS = new Uint8Array(256);
CLASS[QUOTE] = STRING;
CLASS[0x5b] = CLASS[0x7b] = OPENING;
CLASS[0x5d] = CLASS[0x7d] = CLOSING;

/**
 * Whether the JSON text nests arrays and objects deeper than `limit`, found by one pass over the
 * bytes that skips strings (so `"[[["` counts nothing). Runs before JSON.parse: what recursion
 * would overflow (JSON.stringify, a validator, a logger) is refused before it exists. Text that is
 * not JSON may count wrongly; JSON.parse refuses it anyway.
 */
export function nestsDeeperThan(bytes: Buffer, limit: number): boolean {
  // Most messages hold fewer brackets than the limit in all: counted natively (memchr), that
  // settles it for a fraction of the byte-by-byte pass (measured: ~60 ns against ~500 ns for one event).
  if (countUpTo(bytes, 0x7b, limit + 1) + countUpTo(bytes, 0x5b, limit + 1) <= limit) return false;
  let depth = 0;
  for (let i = 0; i < bytes.length; i++) {
    const kind = CLASS[bytes[i]!];
    if (kind === 0) continue;
    if (kind === STRING) {
      for (i++; i < bytes.length; i++) {
        const byte = bytes[i];
        if (byte === QUOTE) break;
        if (byte === BACKSLASH) i++;
      }
    } else if (kind === OPENING) {
      if (++depth > limit) return true;
    } else depth--;
  }
  return false;
}

/** How often `byte` occurs in `bytes`, counting no further than `most`. */
function countUpTo(bytes: Buffer, byte: number, most: number): number {
  let count = 0;
  for (let at = bytes.indexOf(byte); at !== -1 && count < most; at = bytes.indexOf(byte, at + 1)) count++;
  return count;
}
