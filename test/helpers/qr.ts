import { createRequire } from 'node:module';
import { PNG } from 'pngjs';

// jsqr is CommonJS whose types declare an ES default export: required, it is the function itself.
const jsQR = createRequire(import.meta.url)('jsqr') as typeof import('jsqr').default;

/** The text of the QR code in RGBA pixels, or undefined when jsQR reads none. */
function decodePixels(data: Uint8ClampedArray, width: number, height: number): string | undefined {
  return jsQR(data, width, height)?.data;
}

/** The text of the QR code in a PNG image (a screenshot), or undefined when none is read. */
export function decodeQrPng(image: Buffer): string | undefined {
  const png = PNG.sync.read(image);
  return decodePixels(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length), png.width, png.height);
}

/** Light and dark of the top and bottom module of qrcode-terminal's small mode (two rows per line). */
const HALF_BLOCKS: Record<string, [boolean, boolean]> = { '█': [false, false], '▀': [false, true], '▄': [true, false], ' ': [true, true] };

/**
 * The text of a QR code the CLI printed in small mode (light blocks on a dark terminal), drawn
 * as pixels with a light margin, or undefined when none is read.
 */
export function decodeTerminalQr(lines: string[], scale = 4, margin = 4): string | undefined {
  const rows: boolean[][] = [];
  for (const line of lines) {
    const [top, bottom] = [[], []] as [boolean[], boolean[]];
    for (const char of line) {
      const [upper, lower] = HALF_BLOCKS[char] ?? [false, false];
      top.push(upper);
      bottom.push(lower);
    }
    rows.push(top, bottom);
  }
  const size = Math.max(...rows.map((row) => row.length)) + 2 * margin;
  const height = rows.length + 2 * margin;
  const pixels = new Uint8ClampedArray(size * scale * height * scale * 4).fill(255);
  rows.forEach((row, y) =>
    row.forEach((dark, x) => {
      if (!dark) return;
      for (let dy = 0; dy < scale; dy++) {
        for (let dx = 0; dx < scale; dx++) {
          const at = (((y + margin) * scale + dy) * size * scale + (x + margin) * scale + dx) * 4;
          pixels.fill(0, at, at + 3);
        }
      }
    }),
  );
  return decodePixels(pixels, size * scale, height * scale);
}
