import uPlot from 'uplot';
import { h } from './render.js';
import type { Sample } from './samples.js';

/** Seconds of history the charts keep. */
const WINDOW_S = 120;

const css = (name: string): string =>
  getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888';

/** Where the charts' points come from: a live cluster, by the clock, or a simulated run's time. */
export interface ChartsOptions {
  /** The x axis is simulated ms from the run's start rather than the time of day. */
  readonly simulated?: boolean;
}

/**
 * The live charts (uPlot, a maintained chart library of about 50 KB with no dependencies: the
 * browser draws thousands of points a second on a canvas, which hand-made SVG does not do
 * smoothly): committed ops per second per replica, the workload's tentative and stable latency,
 * execution ratio and accuracy, rollbacks per second.
 */
export class LiveCharts {
  private readonly samples: Sample[] = [];
  private readonly plots: { el: HTMLElement; plot: uPlot; data: () => uPlot.AlignedData }[] = [];
  readonly element: HTMLElement;

  constructor(
    replicaIds: readonly number[],
    private readonly options: ChartsOptions = {},
  ) {
    this.element = h('section', { id: 'charts' });
    const palette = ['--weak', '--strong', '--ok', '--warn', '--bad', '--fg', '--muted'];
    const t = (): number[] => this.samples.map((s) => s.t);
    this.add(
      'committed',
      'Committed ops per second',
      replicaIds.map((id, k) => ({
        label: `replica ${id}`,
        stroke: css(palette[k % palette.length]!),
      })),
      () => [t(), ...replicaIds.map((_, k) => this.samples.map((s) => s.committed[k] ?? null))],
    );
    this.add(
      'latency',
      'Answer latency, median ms',
      [
        { label: 'tentative (weak)', stroke: css('--weak') },
        { label: 'stable (strong)', stroke: css('--strong') },
      ],
      () => [t(), this.samples.map((s) => s.tentativeMs), this.samples.map((s) => s.stableMs)],
    );
    this.add(
      'speculation',
      'Execution ratio and accuracy',
      [
        { label: 'executions per op', stroke: css('--warn') },
        { label: 'accuracy', stroke: css('--ok') },
      ],
      () => [t(), this.samples.map((s) => s.executionRatio), this.samples.map((s) => s.accuracy)],
    );
    this.add(
      'rollbacks',
      'Rollbacks per second',
      [{ label: 'rollbacks', stroke: css('--bad') }],
      () => [t(), this.samples.map((s) => s.rollbacks)],
    );
  }

  private add(
    key: string,
    title: string,
    series: { label: string; stroke: string }[],
    data: () => uPlot.AlignedData,
  ): void {
    const el = h('div', { class: 'chart', 'data-chart': key, 'data-points': 0 });
    this.element.append(el);
    const axis = { stroke: css('--muted'), grid: { stroke: css('--line') } };
    const simulated = this.options.simulated === true;
    const plot = new uPlot(
      {
        title,
        width: 560,
        height: 180,
        ...(simulated ? { scales: { x: { time: false } } } : {}),
        series: [
          simulated ? { label: 'simulated ms' } : {},
          ...series.map((s) => ({ ...s, width: 2, spanGaps: false })),
        ],
        axes: [
          simulated
            ? { ...axis, values: (_u: uPlot, xs: number[]) => xs.map((x) => `${x} ms`) }
            : axis,
          axis,
        ],
      },
      data(),
      el,
    );
    this.plots.push({ el, plot, data });
  }

  push(s: Sample): void {
    this.samples.push(s);
    if (this.samples.length > WINDOW_S) this.samples.shift();
    this.redraw();
  }

  /** Draws these samples in place of those drawn (a replay scrubbed to another moment). */
  replace(samples: readonly Sample[]): void {
    this.samples.splice(0, this.samples.length, ...samples);
    this.redraw();
  }

  private redraw(): void {
    for (const p of this.plots) {
      p.plot.setData(p.data());
      p.el.dataset.points = String(this.samples.length);
    }
  }

  /** The samples drawn, newest last (tests read them). */
  get drawn(): readonly Sample[] {
    return this.samples;
  }
}
