/** Drawing units of the line: the style sheet sizes the picture, the line keeps its width. */
const WIDTH = 300;
const HEIGHT = 40;

/**
 * A small line chart of `values` (oldest first) scaled to the largest, as an image named `label`:
 * the line shows only their shape, so put the figures in words beside it.
 */
export function Sparkline({ values, label }: { values: readonly number[]; label: string }) {
  const top = Math.max(1, ...values);
  const step = values.length > 1 ? WIDTH / (values.length - 1) : WIDTH;
  const points = values.map((value, i) => `${(i * step).toFixed(1)},${(HEIGHT - (value / top) * (HEIGHT - 2) - 1).toFixed(1)}`).join(' ');
  return (
    <svg class="sparkline" role="img" aria-label={label} viewBox={`0 0 ${WIDTH} ${HEIGHT}`} preserveAspectRatio="none">
      <line class="sparkline-base" x1="0" y1={HEIGHT - 0.5} x2={WIDTH} y2={HEIGHT - 0.5} vector-effect="non-scaling-stroke" />
      <polyline class="sparkline-line" points={points} vector-effect="non-scaling-stroke" />
    </svg>
  );
}
