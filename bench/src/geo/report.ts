/**
 * bench:geo's tables, chart and verdicts on issue 45's goals, from the run's figures. Latencies
 * are ms; a missing cell (a system without that op) shows as –.
 */
import { nearestMajorityRttMs, regionOf, type NetworkProfile } from '@creek/server/geo';
import type { AdReads } from '../../../packages/examples/src/ads/fetch-ads.js';
import { svgChart, type Series } from '../charts.js';
import type { Quantiles } from './measure.js';
import type { Metric, SystemName } from './systems.js';

export interface GeoResults {
  readonly profile: NetworkProfile;
  readonly replicas: number;
  /** The leader of each system while it was measured (index of its replica or member). */
  readonly leaders: Record<SystemName, number>;
  /** Per system and metric, per client region (index of the replica it sits next to). */
  readonly latency: Record<SystemName, Partial<Record<Metric, Quantiles[]>>>;
  readonly throughput: { readonly outstanding: number; readonly ops: Record<SystemName, number> }[];
  readonly ads: Record<AdReads, { speculative: Quantiles; strongOnly: Quantiles }[]> | null;
}

export function regionLabel(profile: NetworkProfile, i: number): string {
  const region = profile.regions[regionOf(profile, i)]!;
  return profile.regions.length === 1 ? `${region} ${i}` : region;
}

const ms = (v: number | undefined): string =>
  v === undefined || Number.isNaN(v) ? '–' : v < 10 ? v.toFixed(2) : v.toFixed(1);
const pair = (q: Quantiles | undefined): string =>
  q === undefined ? '–' : `${ms(q.p50)} / ${ms(q.p99)}`;
const ratio = (a: number | undefined, b: number | undefined): string =>
  a === undefined || b === undefined ? '–' : `${(a / b).toFixed(2)}×`;

/** The rows of the latency table: what Creek, SMR and etcd do for each kind of op. */
const ROWS: readonly { name: string; creek: Metric; smr?: Metric; etcd?: Metric }[] = [
  { name: 'weak put', creek: 'weak put', smr: 'weak put' },
  { name: 'weak get', creek: 'weak get', smr: 'weak get' },
  { name: 'strong put, tentative', creek: 'strong put tentative' },
  {
    name: 'strong put, stable (etcd put)',
    creek: 'strong put stable',
    smr: 'strong put stable',
    etcd: 'strong put stable',
  },
  {
    name: 'strong get (etcd linearizable get)',
    creek: 'strong get',
    smr: 'strong get',
    etcd: 'strong get',
  },
];

export function latencyTable(r: GeoResults): string[] {
  const lines = [
    `| region | op | Creek p50 / p99 | SMR p50 / p99 | etcd p50 / p99 | Creek ÷ etcd p50 | Creek ÷ SMR p50 |`,
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (let i = 0; i < r.replicas; i++)
    for (const row of ROWS) {
      const c = r.latency.Creek[row.creek]?.[i];
      const s = row.smr === undefined ? undefined : r.latency.SMR[row.smr]?.[i];
      const e = row.etcd === undefined ? undefined : r.latency.etcd[row.etcd]?.[i];
      lines.push(
        `| ${regionLabel(r.profile, i)} | ${row.name} | ${pair(c)} | ${pair(s)} | ${pair(e)} | ${ratio(c?.p50, e?.p50)} | ${ratio(c?.p50, s?.p50)} |`,
      );
    }
  return lines;
}

/** Each region's strong put stable p50 against the physical bound: its nearest majority. */
export function boundTable(r: GeoResults): string[] {
  const lines = [
    '| region | nearest-majority round trip | Creek strong put stable p50 | ÷ bound | SMR strong put p50 | ÷ bound | etcd put p50 | ÷ bound |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (let i = 0; i < r.replicas; i++) {
    const bound = nearestMajorityRttMs(r.profile, i, r.replicas);
    const cells = (['Creek', 'SMR', 'etcd'] as const).map(
      (s) => r.latency[s]['strong put stable']?.[i]?.p50,
    );
    lines.push(
      `| ${regionLabel(r.profile, i)} | ${ms(bound)} | ${cells.map((v) => `${ms(v)} | ${ratio(v, bound)}`).join(' | ')} |`,
    );
  }
  return lines;
}

export function throughputTable(r: GeoResults): string[] {
  const lines = [
    '| outstanding | Creek strong put ops/s | SMR strong put ops/s | etcd put ops/s | Creek ÷ etcd | Creek ÷ SMR |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  const n = (v: number): string => Math.round(v).toLocaleString('en-US');
  for (const t of r.throughput)
    lines.push(
      `| ${t.outstanding} | ${n(t.ops.Creek)} | ${n(t.ops.SMR)} | ${n(t.ops.etcd)} | ${ratio(t.ops.Creek, t.ops.etcd)} | ${ratio(t.ops.Creek, t.ops.SMR)} |`,
    );
  return lines;
}

export function adsTable(r: GeoResults): string[] {
  if (r.ads === null) return [];
  const lines = [
    '| region | ads read | speculating p50 / p99 | stable profile first p50 / p99 | speculating ÷ stable first (p50) |',
    '| --- | --- | --- | --- | --- |',
  ];
  for (let i = 0; i < r.replicas; i++)
    for (const reads of ['strong', 'weak'] as const) {
      const a = r.ads[reads][i];
      if (a === undefined) continue;
      lines.push(
        `| ${regionLabel(r.profile, i)} | ${reads} | ${pair(a.speculative)} | ${pair(a.strongOnly)} | ${ratio(a.speculative.p50, a.strongOnly.p50)} |`,
      );
    }
  return lines;
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const verdict = (ok: boolean): string => (ok ? 'pass' : 'not reached');

/** Issue 45's goals, as ratios from this run, each with pass or not reached. */
export function goals(r: GeoResults): string[] {
  const regions = Array.from({ length: r.replicas }, (_, i) => i);
  const at = (s: SystemName, m: Metric, i: number): Quantiles | undefined => r.latency[s][m]?.[i];
  const lines = ['| goal | measured | verdict |', '| --- | --- | --- |'];
  const worst = (m: Metric, q: 'p50' | 'p99'): number =>
    Math.max(...regions.map((i) => at('Creek', m, i)?.[q] ?? Infinity));
  for (const m of ['weak put', 'weak get'] as const) {
    const p50 = worst(m, 'p50');
    const p99 = worst(m, 'p99');
    lines.push(
      `| ${m} p50 ≤ 2 ms and p99 ≤ 10 ms in every region | worst region p50 ${ms(p50)} ms, p99 ${ms(p99)} ms | ${verdict(p50 <= 2 && p99 <= 10)} |`,
    );
  }
  const putRatios = regions.map(
    (i) => at('Creek', 'strong put stable', i)!.p50 / at('etcd', 'strong put stable', i)!.p50,
  );
  lines.push(
    `| strong put stable p50 ≤ 0.6× etcd put p50, averaged over regions | ${mean(putRatios).toFixed(2)}× (per region ${putRatios.map((x) => x.toFixed(2)).join(' / ')}) | ${verdict(mean(putRatios) <= 0.6)} |`,
  );
  const boundRatios = regions.map(
    (i) =>
      at('Creek', 'strong put stable', i)!.p50 / nearestMajorityRttMs(r.profile, i, r.replicas),
  );
  lines.push(
    `| strong put stable p50 ≤ 1.1× the region's nearest-majority round trip (leader placed at ${regionLabel(r.profile, r.leaders.Creek)}) | worst ${Math.max(...boundRatios).toFixed(3)}× (per region ${boundRatios.map((x) => x.toFixed(3)).join(' / ')}) | ${verdict(boundRatios.every((x) => x <= 1.1))} |`,
  );
  const getRatios = regions.map(
    (i) => at('Creek', 'strong get', i)!.p50 / at('etcd', 'strong get', i)!.p50,
  );
  lines.push(
    `| strong get p50 ≤ 0.6× etcd linearizable get p50 in each region | worst ${Math.max(...getRatios).toFixed(2)}× (per region ${getRatios.map((x) => x.toFixed(2)).join(' / ')}) | ${verdict(getRatios.every((x) => x <= 0.6))} |`,
  );
  const getVsPut = regions.map(
    (i) => at('Creek', 'strong get', i)!.p50 / at('Creek', 'strong put stable', i)!.p50,
  );
  lines.push(
    `| strong get p50 no slower than strong put stable p50 in each region | worst ${Math.max(...getVsPut).toFixed(2)}× (per region ${getVsPut.map((x) => x.toFixed(2)).join(' / ')}) | ${verdict(getVsPut.every((x) => x <= 1))} |`,
  );
  const t256 = r.throughput.find((t) => t.outstanding === 256);
  if (t256 !== undefined) {
    const x = t256.ops.Creek / t256.ops.etcd;
    lines.push(
      `| strong put ops/s at 256 outstanding ≥ 1.0× etcd put | ${x.toFixed(2)}× | ${verdict(x >= 1)} |`,
    );
  }
  if (r.ads !== null) {
    for (const reads of ['strong', 'weak'] as const) {
      const x = regions.map(
        (i) => r.ads![reads][i]!.speculative.p50 / r.ads![reads][i]!.strongOnly.p50,
      );
      lines.push(
        `| ad serving with speculation ≤ 0.6× without (ads read ${reads}ly), averaged over regions | ${mean(x).toFixed(2)}× (per region ${x.map((v) => v.toFixed(2)).join(' / ')}) | ${verdict(mean(x) <= 0.6)} |`,
      );
    }
  }
  return lines;
}

/** p50 by client region (x: the region's index in the tables), Creek vs etcd vs SMR. */
export function latencyChart(r: GeoResults): string {
  const points = (s: SystemName, m: Metric) =>
    Array.from({ length: r.replicas }, (_, i) => ({
      x: i,
      y: r.latency[s][m]?.[i]?.p50 ?? NaN,
    })).filter((p) => !Number.isNaN(p.y));
  const series: Series[] = [
    { label: 'Creek strong put (stable)', points: points('Creek', 'strong put stable') },
    { label: 'Creek strong get', points: points('Creek', 'strong get') },
    { label: 'etcd put', points: points('etcd', 'strong put stable') },
    { label: 'etcd linearizable get', points: points('etcd', 'strong get') },
    { label: 'SMR strong put', points: points('SMR', 'strong put stable') },
    { label: 'SMR weak put', points: points('SMR', 'weak put') },
    { label: 'Creek weak put', points: points('Creek', 'weak put') },
    {
      label: 'nearest-majority round trip',
      dashed: true,
      points: Array.from({ length: r.replicas }, (_, i) => ({
        x: i,
        y: nearestMajorityRttMs(r.profile, i, r.replicas),
      })),
    },
  ];
  const names = Array.from({ length: r.replicas }, (_, i) => `${i} ${regionLabel(r.profile, i)}`);
  return svgChart(
    {
      title: `bench:geo ${r.profile.name}: p50 latency by client region`,
      xLabel: `client region (${names.join(', ')})`,
      yLabel: 'p50 latency (ms)',
      yLog: true,
      series,
    },
    { width: 720, height: 420 },
  );
}
