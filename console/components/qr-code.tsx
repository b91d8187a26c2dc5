import { useEffect, useState } from 'preact/hooks';
import { ErrorMessage } from './error-message';

/** Light modules around the code, as the QR standard asks (ISO/IEC 18004: four modules). */
const QUIET_ZONE = 4;

interface Matrix {
  size: number;
  path: string;
}

/** The dark modules as one SVG path of unit squares. */
async function matrixOf(text: string): Promise<Matrix> {
  // Loaded with the first code shown: pages without one never fetch the encoder.
  const loaded = await import('qrcode');
  // qrcode is CommonJS: bundled, its exports are the namespace's default.
  const { create } = (loaded as unknown as { default?: typeof loaded }).default ?? loaded;
  const { modules } = create(text, { errorCorrectionLevel: 'M' });
  let path = '';
  for (let row = 0; row < modules.size; row++) {
    for (let column = 0; column < modules.size; column++) {
      if (modules.get(row, column)) path += `M${column + QUIET_ZONE} ${row + QUIET_ZONE}h1v1h-1z`;
    }
  }
  return { size: modules.size + 2 * QUIET_ZONE, path };
}

/**
 * A QR code of `text` as an image named `label`: dark on white in both colour schemes (cameras
 * want the contrast), sized by the style sheet to be read from a laptop screen at arm's length.
 */
export function QrCode({ text, label }: { text: string; label: string }) {
  const [matrix, setMatrix] = useState<Matrix>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    let current = true;
    matrixOf(text).then(
      (made) => current && setMatrix(made),
      (failure) => current && setError(failure),
    );
    return () => {
      current = false;
    };
  }, [text]);
  if (error) return <ErrorMessage error={error} />;
  if (!matrix) return <div class="qr-code loading" aria-busy="true" />;
  return (
    <svg class="qr-code" role="img" aria-label={label} viewBox={`0 0 ${matrix.size} ${matrix.size}`} shape-rendering="crispEdges">
      <rect width={matrix.size} height={matrix.size} fill="#fff" />
      <path d={matrix.path} fill="#000" />
    </svg>
  );
}
