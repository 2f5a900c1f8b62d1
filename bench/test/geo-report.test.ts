import { profileNamed } from '@creek/server/geo';
import { describe, expect, it } from 'vitest';
import { fitErrors, linkDelay, memberDelays } from '../src/geo/links.js';
import type { Quantiles } from '../src/geo/measure.js';
import { goals, type GeoResults } from '../src/geo/report.js';

const usEu = profileNamed('us-eu');

describe("bench:geo's links", () => {
  it("delays a link by half the profile's round trip and its jitter share, in whole ms", () => {
    // us-east–us-west: 87 ms round trip, 5 % jitter.
    expect(linkDelay(usEu, 0, 1)).toEqual({ latencyMs: 44, jitterMs: 2 });
    expect(linkDelay(usEu, 1, 2)).toEqual({ latencyMs: 65, jitterMs: 3 });
  });

  it('fits per-member delays that give every round trip of 3 members exactly', () => {
    const c = memberDelays(usEu, 3);
    for (const f of fitErrors(usEu, c)) expect(f.fitted).toBeCloseTo(f.rtt, 1);
    expect(c.map((x) => Math.round(x))).toEqual([19, 68, 62]);
  });

  it('leaves a residual with 5 members, which the run reports', () => {
    const global = profileNamed('global');
    const worst = Math.max(
      ...fitErrors(global, memberDelays(global, 5)).map((f) => Math.abs(f.fitted - f.rtt)),
    );
    expect(worst).toBeGreaterThan(20);
  });
});

const q = (p50: number, p99 = p50): Quantiles => ({ p50, p99 });
const three = <T>(x: T): T[] => [x, x, x];

/** A us-eu run's figures; `over` replaces some. */
function results(over: Partial<Record<string, Quantiles[]>> = {}, rate = 1.2): GeoResults {
  return {
    profile: usEu,
    replicas: 3,
    leaders: { Creek: 0, SMR: 0, etcd: 0 },
    latency: {
      Creek: {
        'weak put': over['weak put'] ?? three(q(1, 5)),
        'weak get': three(q(1, 5)),
        'strong put tentative': three(q(2)),
        // The nearest majority: 81 / 87 / 81 ms.
        'strong put stable': over['strong put stable'] ?? [q(85), q(90), q(85)],
        'strong get': three(q(80)),
      },
      SMR: {},
      etcd: { 'strong put stable': three(q(170)), 'strong get': three(q(170)) },
    },
    throughput: [{ outstanding: 256, ops: { Creek: 1000 * rate, SMR: 1000, etcd: 1000 } }],
    ads: {
      strong: three({ speculative: q(90), strongOnly: q(180) }),
      weak: three({ speculative: q(90), strongOnly: q(91) }),
    },
  };
}

const verdictOf = (lines: string[], goal: RegExp): string =>
  lines
    .find((l) => goal.test(l))
    ?.split('|')
    .at(-2)
    ?.trim() ?? 'missing';

describe("bench:geo's goals", () => {
  it('passes a run that meets each goal', () => {
    const g = goals(results());
    expect(verdictOf(g, /^\| weak put p50/)).toBe('pass');
    expect(verdictOf(g, /0\.6× etcd put/)).toBe('pass');
    expect(verdictOf(g, /nearest-majority/)).toBe('pass');
    expect(verdictOf(g, /linearizable get/)).toBe('pass');
    expect(verdictOf(g, /no slower than strong put/)).toBe('pass');
    expect(verdictOf(g, /256 outstanding/)).toBe('pass');
    expect(verdictOf(g, /ads read strongly/)).toBe('pass');
    expect(verdictOf(g, /ads read weakly/)).toBe('not reached');
  });

  it('says not reached where one region misses, with the measurement', () => {
    const g = goals(
      results(
        { 'weak put': [q(1, 5), q(1, 11), q(1, 5)], 'strong put stable': [q(85), q(90), q(130)] },
        0.9,
      ),
    );
    expect(verdictOf(g, /^\| weak put p50/)).toBe('not reached');
    expect(g.find((l) => l.startsWith('| weak put'))).toContain('p99 11.0 ms');
    // 130 / 81: over 1.1× in eu-west alone.
    expect(verdictOf(g, /nearest-majority/)).toBe('not reached');
    expect(g.find((l) => /nearest-majority/.test(l))).toContain('1.605');
    expect(verdictOf(g, /256 outstanding/)).toBe('not reached');
  });
});
