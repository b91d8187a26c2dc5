import { useEffect, useId, useMemo, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import type { JobAnalysis } from '../../../src/client/jobs';
import { formatDuration } from '../../../src/domain/job-stats';
import { ErrorMessage } from '../../components/error-message';
import { chartSeries, type ChartSeries } from './chart-data';
import { useDarkScheme } from './use-color-scheme';
// uPlot's own rules (its layers and axes): esbuild adds them to the console's one style sheet.
import 'uplot/dist/uPlot.min.css';

const HEIGHT = 320;

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
/** The steps of the duration axis: round seconds, minutes and hours rather than uPlot's decimal ones (50 s, 100 s). */
const DURATION_STEPS = [100, 200, 500, SECOND, 2 * SECOND, 5 * SECOND, 10 * SECOND, 15 * SECOND, 30 * SECOND, MINUTE, 2 * MINUTE, 5 * MINUTE, 10 * MINUTE, 15 * MINUTE, 30 * MINUTE, HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, 24 * HOUR, 48 * HOUR, 7 * 24 * HOUR];

/** uPlot, loaded with the first chart drawn: the rest of the Jobs page does without it. */
async function loadUplot(): Promise<typeof uPlot> {
  const loaded = await import('uplot');
  return (loaded as unknown as { default: typeof uPlot }).default;
}

/** The options of the chart, its colours read from the style sheet's palette of the current scheme. */
function options(series: ChartSeries, nameOf: (id: string) => string, width: number, style: CSSStyleDeclaration): uPlot.Options {
  const color = (name: string) => style.getPropertyValue(name).trim();
  const axis = { stroke: color('--text'), grid: { stroke: color('--border'), width: 1 }, ticks: { stroke: color('--border'), width: 1 } };
  return {
    width,
    height: HEIGHT,
    legend: { show: false },
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
    axes: [axis, { ...axis, size: 80, incrs: DURATION_STEPS, values: (_u, splits) => splits.map((ms) => formatDuration(ms)) }],
    series: [
      {},
      ...series.gatewayIds.map((id, i) => ({
        label: nameOf(id),
        stroke: color(`--chart-${i + 1}`),
        width: 2,
        spanGaps: true,
        points: { show: true, size: 7, fill: color(`--chart-${i + 1}`) },
      })),
    ],
  };
}

/**
 * The jobs of an analysis drawn by uPlot on a canvas: a point per job at its start, as high as it
 * lasted, a line per gateway. The canvas is an image named `Job durations`; the legend and the
 * summary table beside it say in text what it shows.
 */
export function DurationChart({ analysis, nameOf }: { analysis: JobAnalysis; nameOf: (id: string) => string }) {
  const target = useRef<HTMLDivElement>(null);
  const legendId = useId();
  const dark = useDarkScheme();
  const [error, setError] = useState<unknown>();
  const series = useMemo(() => chartSeries(analysis), [analysis]);
  useEffect(() => {
    let plot: uPlot | undefined;
    let observer: ResizeObserver | undefined;
    let current = true;
    loadUplot().then((UPlot) => {
      const element = target.current;
      if (!current || !element) return;
      plot = new UPlot(options(series, nameOf, element.clientWidth, getComputedStyle(element)), series.data, element);
      // The page's width changes (a window resized, a phone turned): the canvas follows.
      observer = new ResizeObserver(() => plot?.setSize({ width: element.clientWidth, height: HEIGHT }));
      observer.observe(element);
    }, setError);
    return () => {
      current = false;
      observer?.disconnect();
      plot?.destroy();
    };
  }, [series, nameOf, dark]);
  if (error) return <ErrorMessage error={error} />;
  return (
    <figure class="job-chart">
      <div ref={target} class="job-chart-canvas" role="img" aria-label="Job durations" aria-describedby={legendId} />
      <figcaption id={legendId}>
        <ul class="chart-legend">
          {series.gatewayIds.map((id, i) => (
            <li key={id}>
              <span class={`chart-swatch chart-${i + 1}`} aria-hidden="true" />
              {nameOf(id)}
            </li>
          ))}
        </ul>
        <p class="hint">
          Each point is a job: when it started, and how long it lasted.
          {series.left > 0 && ` ${series.left} more gateway${series.left === 1 ? '' : 's'} with jobs are in the summary only.`}
        </p>
      </figcaption>
    </figure>
  );
}
