import { describe, expect, it } from 'vitest';
import { htmlReport, svgChart, type Chart } from '../src/charts.js';

/** The benchmark figures: SVG line charts and the offline HTML report that holds them. */

const count = (s: string, sub: string): number => s.split(sub).length - 1;
const seriesGroups = (svg: string): string[] =>
  [...svg.matchAll(/<g class="series"[^>]*>([\s\S]*?)<\/g>/g)].map((m) => m[1] ?? '');
const tickLabels = (svg: string, axis: 'x' | 'y'): string[] =>
  [...svg.matchAll(new RegExp(`<text class="${axis}tick"[^>]*>([^<]*)</text>`, 'g'))].map(
    (m) => m[1] ?? '',
  );
/** The points of each polyline, as drawn (svg coordinates). */
const polylines = (svg: string): number[][][] =>
  [...svg.matchAll(/<polyline points="([^"]*)"/g)].map((m) =>
    (m[1] ?? '').split(' ').map((xy) => xy.split(',').map(Number)),
  );

const chart: Chart = {
  title: 'New-order latency vs throughput',
  xLabel: 'throughput (tx/s)',
  yLabel: 'p99 latency (ms)',
  series: [
    {
      label: 'strong',
      points: [
        { x: 3000, y: 40 },
        { x: 1000, y: 12 },
        { x: 2000, y: 20 },
      ],
    },
    {
      label: 'weak',
      dashed: true,
      points: [
        { x: 1000, y: 2 },
        { x: 5000, y: 9 },
      ],
    },
  ],
};

describe('svgChart', () => {
  it('joins the points in the order given when asked (a curve that bends back)', () => {
    const points = [
      { x: 100, y: 1 },
      { x: 300, y: 2 },
      { x: 200, y: 9 },
    ];
    const xsOf = (inOrder: boolean): number[] =>
      polylines(svgChart({ ...chart, series: [{ label: 'a', points, inOrder }] }))[0]!.map(
        ([x]) => x ?? NaN,
      );
    const given = xsOf(true);
    expect(given[1]! > given[2]!).toBe(true);
    const sorted = xsOf(false);
    expect(sorted).toEqual([...sorted].sort((a, b) => a - b));
  });

  it('draws one polyline per series with a marker per point, sorted by x', () => {
    const svg = svgChart(chart);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg" width="560" height="340"')).toBe(
      true,
    );
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(count(svg, '<polyline')).toBe(2);
    expect(seriesGroups(svg).map((g) => count(g, '<circle'))).toEqual([3, 2]);
    for (const line of polylines(svg)) {
      const xs = line.map(([x]) => x ?? NaN);
      expect(xs).toEqual([...xs].sort((a, b) => a - b));
    }
    // Distinct colours, and the dashed series (only) is dashed, in the plot and in the legend.
    const colours = [...svg.matchAll(/<polyline[^>]*stroke="(#[0-9A-Fa-f]{6})"/g)].map((m) => m[1]);
    expect(new Set(colours).size).toBe(2);
    expect(count(svg, 'stroke-dasharray')).toBe(2);
    expect(svg).toContain('>strong</text>');
    expect(svg).toContain('>weak</text>');
  });

  it('honours the size and cycles the palette past eight series', () => {
    const many: Chart = {
      ...chart,
      series: Array.from({ length: 10 }, (_, i) => ({ label: `s${i}`, points: [{ x: i, y: i }] })),
    };
    const svg = svgChart(many, { width: 800, height: 400 });
    expect(svg).toContain('width="800" height="400" viewBox="0 0 800 400"');
    const fills = [...svg.matchAll(/<g class="series"[^>]*fill="([^"]+)"/g)].map((m) => m[1]);
    expect(fills).toHaveLength(10);
    expect(new Set(fills.slice(0, 8)).size).toBe(8);
    expect(fills[8]).toBe(fills[0]);
  });

  it('puts nice, compactly labelled ticks on a linear axis starting at 0', () => {
    const svg = svgChart(chart);
    expect(tickLabels(svg, 'y')).toEqual(['0', '10', '20', '30', '40']);
    expect(tickLabels(svg, 'x')).toEqual(['1k', '2k', '3k', '4k', '5k']);
    const small = svgChart({
      ...chart,
      series: [
        {
          label: 'a',
          points: [
            { x: 0, y: 0.1 },
            { x: 1200, y: 2.4 },
          ],
        },
      ],
    });
    expect(tickLabels(small, 'y')).toEqual(['0', '0.5', '1', '1.5', '2', '2.5']);
    expect(tickLabels(small, 'x')).toEqual(['0', '200', '400', '600', '800', '1k', '1.2k']);
  });

  it('keeps a fixed yRange', () => {
    const svg = svgChart({ ...chart, yRange: [0, 100] });
    expect(tickLabels(svg, 'y')).toEqual(['0', '20', '40', '60', '80', '100']);
  });

  it('escapes all text', () => {
    const svg = svgChart({
      ...chart,
      title: `a < b & "c"`,
      xLabel: `it's`,
      series: [{ label: '<script>', points: [{ x: 1, y: 1 }] }],
    });
    expect(svg).toContain('a &lt; b &amp; &quot;c&quot;');
    expect(svg).toContain('it&#39;s');
    expect(svg).toContain('&lt;script&gt;');
    expect(svg).not.toContain('<script');
    expect(svg).not.toContain('a < b');
  });

  it('skips NaN and infinite points', () => {
    const svg = svgChart({
      ...chart,
      series: [
        {
          label: 'a',
          points: [
            { x: 1, y: 1 },
            { x: NaN, y: 2 },
            { x: 2, y: Infinity },
            { x: 3, y: 3 },
            { x: -Infinity, y: 0 },
          ],
        },
      ],
    });
    expect(seriesGroups(svg).map((g) => count(g, '<circle'))).toEqual([2]);
    expect(svg).not.toContain('NaN');
    expect(svg).not.toContain('Infinity');
  });

  it('on a log axis skips non-positive values and puts ticks at powers of ten', () => {
    const svg = svgChart({
      ...chart,
      yLog: true,
      series: [
        {
          label: 'latency',
          points: [
            { x: 1, y: 0 },
            { x: 2, y: 3 },
            { x: 3, y: -5 },
            { x: 4, y: 250 },
            { x: 5, y: 12_000 },
          ],
        },
      ],
    });
    expect(seriesGroups(svg).map((g) => count(g, '<circle'))).toEqual([3]);
    expect(tickLabels(svg, 'y')).toEqual(['1', '10', '100', '1k', '10k', '100k']);
    // Evenly spaced: each decade takes the same height.
    const ys = [...svg.matchAll(/<text class="ytick" x="[^"]*" y="([^"]*)"/g)].map((m) =>
      Number(m[1]),
    );
    const gaps = ys.slice(1).map((y, i) => (ys[i] ?? 0) - y);
    for (const gap of gaps) expect(gap).toBeCloseTo(gaps[0] ?? 0, 0);
  });

  it('on a log axis over few decades adds 2 and 5 multiples', () => {
    const svg = svgChart({
      ...chart,
      yLog: true,
      series: [
        {
          label: 'a',
          points: [
            { x: 1, y: 3 },
            { x: 2, y: 40 },
          ],
        },
      ],
    });
    expect(tickLabels(svg, 'y')).toEqual(['1', '2', '5', '10', '20', '50', '100']);
  });

  it('renders "no data" rather than throwing when nothing is drawable', () => {
    for (const c of [
      { ...chart, series: [] },
      { ...chart, series: [{ label: 'a', points: [{ x: NaN, y: 1 }] }] },
      { ...chart, yLog: true, series: [{ label: 'a', points: [{ x: 1, y: 0 }] }] },
    ]) {
      const svg = svgChart(c);
      expect(svg).toMatch(/^<svg[\s\S]*<\/svg>$/);
      expect(svg).toContain('>no data</text>');
      expect(svg).not.toContain('<polyline');
    }
  });

  it('copes with a single point', () => {
    const svg = svgChart({ ...chart, series: [{ label: 'a', points: [{ x: 7, y: 0 }] }] });
    expect(count(svg, '<circle')).toBe(2); // the marker and its legend swatch
    expect(svg).not.toContain('NaN');
  });
});

describe('htmlReport', () => {
  const report = htmlReport('TPC-C <report>', [
    {
      heading: 'Latency & throughput',
      text: '| mode | p99 |\n|---|---|\n| <strong> | 40 |',
      charts: [chart, { ...chart, yLog: true }],
    },
    { heading: 'Accuracy', charts: [{ ...chart, yRange: [0, 100] }] },
    { heading: 'Notes only', text: 'nothing to plot', charts: [] },
  ]);

  it('is a complete page with every section heading and its text escaped in <pre>', () => {
    expect(report.startsWith('<!doctype html>')).toBe(true);
    expect(report).toContain('</html>');
    expect(report).toContain('<title>TPC-C &lt;report&gt;</title>');
    expect(report).toContain('<h1>TPC-C &lt;report&gt;</h1>');
    for (const h of ['Latency &amp; throughput', 'Accuracy', 'Notes only']) {
      expect(report).toContain(`<h2>${h}</h2>`);
    }
    expect(report).toContain('<pre>| mode | p99 |\n|---|---|\n| &lt;strong&gt; | 40 |</pre>');
    expect(report).toContain('<pre>nothing to plot</pre>');
    expect(count(report, '<pre>')).toBe(2);
  });

  it('inlines one svg per chart', () => {
    expect(count(report, '<svg')).toBe(3);
    expect(count(report, '</svg>')).toBe(3);
    // Clip paths of different charts must not share an id in one document.
    const ids = [...report.matchAll(/<clipPath id="([^"]+)"/g)].map((m) => m[1]);
    expect(new Set(ids).size).toBe(3);
  });

  it('references nothing external and runs no script', () => {
    expect(report).not.toMatch(/<script/i);
    expect(report).not.toMatch(/<link/i);
    expect(report).not.toMatch(/\b(src|href)=/i);
    expect(report).not.toContain('http');
  });
});
