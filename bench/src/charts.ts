/**
 * Dependency-free SVG line charts and a static HTML report, for benchmarks that write figures next
 * to their tables (TPC-C latency, accuracy or execution ratio against throughput, one series per
 * system mode). Strings in, strings out: no DOM, no scripts and no external resources, so a report
 * opens offline and can be kept next to the run's markdown.
 */

export interface Point {
  readonly x: number;
  readonly y: number;
}
export interface Series {
  readonly label: string;
  readonly points: readonly Point[];
  readonly dashed?: boolean;
  /**
   * Join the points in the order given rather than by x: a run over rising offered load, whose
   * throughput falls back once the system saturates, bends back as it did.
   */
  readonly inOrder?: boolean;
}
export interface Chart {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly Series[];
  /** Logarithmic y axis (latencies spanning decades); non-positive values are skipped on it. */
  readonly yLog?: boolean;
  /** Fixed y range, e.g. [0, 100] for a percentage; default: from the data, starting at 0 on a linear axis. */
  readonly yRange?: readonly [number, number];
}

// Okabe–Ito, ordered so the first few stay distinguishable under the common colour-vision
// deficiencies and in greyscale print; yellow comes last as it is faint on white.
const PALETTE = '#0072B2 #E69F00 #009E73 #D55E00 #CC79A7 #56B4E9 #000000 #F0E442'.split(' ');
const DEFAULT_SIZE = { width: 560, height: 340 };
const SVG_NS = 'http://www.w3.org/2000/svg';
const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
const r1 = (v: number): number => Math.round(v * 10) / 10;
// Several charts share one HTML document, and so one id namespace for their clip paths.
let clipIds = 0;

interface Axis {
  readonly ticks: readonly number[];
  /** The tick spacing on a linear axis, so labels get just enough decimals to differ. */
  readonly step?: number;
  /** Where v falls on the axis, 0 at the low end and 1 at the high end. */
  readonly pos: (v: number) => number;
}

/**
 * A compact label: 1.2k, 15k, 0.5, 250. With the tick step the decimals follow the step, so close
 * ticks such as 100.2k and 100.4k do not both read 100k; without it, three significant digits.
 */
function fmt(v: number, step?: number): string {
  const a = Math.abs(v);
  const [div, suffix] =
    a >= 1e9 ? [1e9, 'G'] : a >= 1e6 ? [1e6, 'M'] : a >= 1e3 ? [1e3, 'k'] : [1, ''];
  const digits = step === undefined ? -1 : Math.max(0, Math.ceil(-Math.log10(step / div) - 1e-9));
  const n = digits < 0 ? Number((v / div).toPrecision(3)) : Number((v / div).toFixed(digits));
  return `${n}${suffix}`;
}

/** 1, 2 or 5 × 10^k, whichever is nearest above-ish `raw`. */
function niceStep(raw: number): number {
  const mag = Number(`1e${Math.floor(Math.log10(raw))}`);
  const f = raw / mag;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

function linearAxis(lo: number, hi: number, fixed: boolean): Axis {
  if (hi <= lo) {
    // One value: give it room, but keep a zero floor (a flat line at 0 still starts at 0).
    const pad = Math.abs(lo) / 2 || 1;
    if (lo !== 0) lo -= pad;
    hi += pad;
  }
  const step = niceStep((hi - lo) / 5);
  if (!fixed) {
    lo = Math.floor(lo / step + 1e-9) * step;
    hi = Math.ceil(hi / step - 1e-9) * step;
  }
  const ticks: number[] = [];
  for (let k = Math.ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k++) {
    ticks.push(Number((k * step).toPrecision(12)));
  }
  return { ticks, step, pos: (v) => (v - lo) / (hi - lo) };
}

function logAxis(lo: number, hi: number, fixed: boolean): Axis {
  if (!fixed) {
    lo = Number(`1e${Math.floor(Math.log10(lo))}`);
    hi = Number(`1e${Math.ceil(Math.log10(hi))}`);
  }
  if (hi <= lo) hi = lo * 10;
  const e0 = Math.floor(Math.log10(lo) + 1e-9);
  const e1 = Math.ceil(Math.log10(hi) - 1e-9);
  // Over one or two decades powers of ten alone would leave two or three ticks; over many they
  // would crowd, so keep about six of them.
  const mults = e1 - e0 <= 2 ? [1, 2, 5] : [1];
  const every = Math.max(1, Math.ceil((e1 - e0) / 6));
  const ticks: number[] = [];
  for (let e = e0; e <= e1; e += every) {
    for (const m of mults) {
      const v = Number(`${m}e${e}`);
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) ticks.push(v);
    }
  }
  const [l0, l1] = [Math.log10(lo), Math.log10(hi)];
  return { ticks, pos: (v) => (Math.log10(v) - l0) / (l1 - l0) };
}

const minOf = (vs: readonly number[]): number => vs.reduce((a, b) => Math.min(a, b), Infinity);
const maxOf = (vs: readonly number[]): number => vs.reduce((a, b) => Math.max(a, b), -Infinity);

/** One chart as a standalone <svg> element (width x height px, default 560 x 340). */
export function svgChart(chart: Chart, size?: { width: number; height: number }): string {
  return render(chart, size ?? DEFAULT_SIZE, true);
}

// Inline in HTML the namespace is implied; leaving it out keeps the report free of any URL.
function render(
  chart: Chart,
  size: { width: number; height: number },
  standalone: boolean,
): string {
  const { width, height } = size;
  const drawable = (p: Point): boolean =>
    Number.isFinite(p.x) && Number.isFinite(p.y) && (!chart.yLog || p.y > 0);
  const series = chart.series.map((s) => ({
    ...s,
    points:
      s.inOrder === true
        ? s.points.filter(drawable)
        : s.points.filter(drawable).sort((a, b) => a.x - b.x),
  }));
  const out = [
    `<svg${standalone ? ` xmlns="${SVG_NS}"` : ''} width="${width}" height="${height}" ` +
      `viewBox="0 0 ${width} ${height}" role="img" aria-label="${esc(chart.title)}" ` +
      `font-family="system-ui, sans-serif" font-size="11" fill="#222">`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text class="title" x="${r1(width / 2)}" y="20" text-anchor="middle" font-size="14" ` +
      `font-weight="bold">${esc(chart.title)}</text>`,
  ];
  const all = series.flatMap((s) => s.points);
  if (all.length === 0) {
    out.push(
      `<text class="no-data" x="${r1(width / 2)}" y="${r1(height / 2)}" text-anchor="middle" ` +
        `fill="#888">no data</text>`,
      '</svg>',
    );
    return out.join('\n');
  }

  const xs = all.map((p) => p.x);
  const ys = all.map((p) => p.y);
  const xAxis = linearAxis(minOf(xs), maxOf(xs), false);
  // A fixed range that a log axis cannot show (zero or below) falls back to the data.
  const fixed = chart.yRange && (!chart.yLog || chart.yRange[0] > 0) ? chart.yRange : undefined;
  const yAxis = chart.yLog
    ? logAxis(fixed?.[0] ?? minOf(ys), fixed?.[1] ?? maxOf(ys), fixed !== undefined)
    : linearAxis(
        fixed?.[0] ?? Math.min(0, minOf(ys)),
        fixed?.[1] ?? Math.max(0, maxOf(ys)),
        fixed !== undefined,
      );

  // The legend sits right of the plot, so it never hides a point; its width follows the labels.
  const legendW = Math.min(180, 36 + 6.5 * maxOf(series.map((s) => s.label.length)));
  const left = 58;
  const top = 34;
  const w = Math.max(10, width - left - 12 - legendW);
  const h = Math.max(10, height - top - 44);
  const px = (x: number): number => r1(left + xAxis.pos(x) * w);
  const py = (y: number): number => r1(top + h - yAxis.pos(y) * h);

  for (const t of yAxis.ticks) {
    const y = py(t);
    out.push(
      `<line x1="${left}" x2="${r1(left + w)}" y1="${y}" y2="${y}" stroke="#e6e6e6"/>`,
      `<text class="ytick" x="${left - 6}" y="${r1(y + 4)}" text-anchor="end">${esc(fmt(t, yAxis.step))}</text>`,
    );
  }
  for (const t of xAxis.ticks) {
    const x = px(t);
    out.push(
      `<line x1="${x}" x2="${x}" y1="${r1(top + h)}" y2="${r1(top + h + 4)}" stroke="#888"/>`,
      `<text class="xtick" x="${x}" y="${r1(top + h + 16)}" text-anchor="middle">${esc(fmt(t, xAxis.step))}</text>`,
    );
  }
  out.push(
    `<path d="M${left} ${top}V${r1(top + h)}H${r1(left + w)}" fill="none" stroke="#888"/>`,
    `<text class="xlabel" x="${r1(left + w / 2)}" y="${height - 8}" text-anchor="middle">${esc(chart.xLabel)}</text>`,
    `<text class="ylabel" transform="translate(14 ${r1(top + h / 2)}) rotate(-90)" ` +
      `text-anchor="middle">${esc(chart.yLabel)}</text>`,
  );

  // Clipped to the plot (with room for a marker's radius) for data beyond a fixed yRange.
  const clip = `creek-chart-clip-${++clipIds}`;
  out.push(
    `<defs><clipPath id="${clip}"><rect x="${left - 4}" y="${top - 4}" width="${r1(w + 8)}" ` +
      `height="${r1(h + 8)}"/></clipPath></defs>`,
  );
  series.forEach((s, i) => {
    const colour = PALETTE[i % PALETTE.length] ?? '#000';
    const dash = s.dashed ? ' stroke-dasharray="6 4"' : '';
    if (s.points.length > 0) {
      const pts = s.points.map((p) => `${px(p.x)},${py(p.y)}`).join(' ');
      const marks = s.points.map((p) => `<circle cx="${px(p.x)}" cy="${py(p.y)}" r="3"/>`);
      out.push(
        `<g class="series" data-label="${esc(s.label)}" clip-path="url(#${clip})" fill="${colour}">`,
        `<polyline points="${pts}" fill="none" stroke="${colour}" stroke-width="1.8"${dash}/>`,
        ...marks,
        '</g>',
      );
    }
    const lx = r1(left + w + 14);
    const ly = top + 6 + i * 16;
    out.push(
      `<g class="legend" fill="${colour}">`,
      `<line x1="${lx}" x2="${r1(lx + 20)}" y1="${ly}" y2="${ly}" stroke="${colour}" stroke-width="1.8"${dash}/>`,
      `<circle cx="${r1(lx + 10)}" cy="${ly}" r="3"/>`,
      `<text x="${r1(lx + 26)}" y="${ly + 4}" fill="#222">${esc(s.label)}</text>`,
      '</g>',
    );
  });
  out.push('</svg>');
  return out.join('\n');
}

const STYLE =
  'body{font-family:system-ui,sans-serif;margin:2rem;color:#222}' +
  'pre{background:#f6f6f6;padding:0.75rem;overflow-x:auto}' +
  '.charts{display:flex;flex-wrap:wrap;gap:1rem}';

/** A complete HTML page: a title, then per section a heading, an optional preformatted text block (e.g. a markdown table, shown in <pre>) and its charts inline. No scripts, no external resources (works offline, no CDN). */
export function htmlReport(
  title: string,
  sections: readonly { heading: string; text?: string; charts: readonly Chart[] }[],
): string {
  const body = sections.map((s) =>
    [
      '<section>',
      `<h2>${esc(s.heading)}</h2>`,
      ...(s.text === undefined ? [] : [`<pre>${esc(s.text)}</pre>`]),
      ...(s.charts.length === 0
        ? []
        : [
            '<div class="charts">',
            ...s.charts.map((c) => render(c, DEFAULT_SIZE, false)),
            '</div>',
          ]),
      '</section>',
    ].join('\n'),
  );
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<title>${esc(title)}</title>`,
    `<style>${STYLE}</style>`,
    '</head>',
    '<body>',
    `<h1>${esc(title)}</h1>`,
    ...body,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
