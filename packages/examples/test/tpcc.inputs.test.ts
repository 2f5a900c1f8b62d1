import { describe, expect, it } from 'vitest';
import app from '../src/tpcc/app.js';
import { TPCC_LEVELS, TPCC_MIX, TpccInputs, type TpccTransaction } from '../src/tpcc/inputs.js';
import { lastName, Rng } from '../src/tpcc/random.js';
import {
  lastNameCount,
  loadC,
  nurandA,
  REDUCED,
  runC,
  scaleOf,
  SPEC,
  TINY,
  type Scale,
} from '../src/tpcc/scale.js';

/**
 * The client's input generation follows §2.x.1 and the mix of §5.2.3. Every seed is fixed, so
 * these tolerances (four to five standard deviations) are checks of the rules, never flaky.
 */
const N = 10_000;

function inputs(scale: Scale, seed = 1): TpccInputs {
  return new TpccInputs({ seed, scale, loadSeed: 3 });
}

/** `p` is within `sd` standard deviations of a binomial proportion `expected` over `n` draws. */
function near(p: number, expected: number, n: number, sd = 5): void {
  const tolerance = sd * Math.sqrt((expected * (1 - expected)) / n);
  expect(Math.abs(p - expected), `${p} vs ${expected} ± ${tolerance}`).toBeLessThanOrEqual(
    tolerance,
  );
}

describe('the transaction mix (§5.2.3) and levels', () => {
  it('draws New-Order 45 %, Payment 43 %, and 4 % each of the others, over 10,000', () => {
    const gen = inputs(scaleOf(REDUCED, 5));
    const counts = new Map<string, number>();
    for (let k = 0; k < N; k++) {
      const t = gen.nextTransaction();
      counts.set(t.op, (counts.get(t.op) ?? 0) + 1);
    }
    for (const [op, pct] of Object.entries(TPCC_MIX)) near(counts.get(op)! / N, pct / 100, N);
  });

  it('invokes Payment strong and the rest weak, and every drawn argument passes its op schema', () => {
    expect(TPCC_LEVELS).toEqual({
      'tpcc.newOrder': 'weak',
      'tpcc.payment': 'strong',
      'tpcc.orderStatus': 'weak',
      'tpcc.delivery': 'weak',
      'tpcc.stockLevel': 'weak',
    });
    expect(app.lookup('tpcc.orderStatus')!.readOnly).toBe(true);
    expect(app.lookup('tpcc.stockLevel')!.readOnly).toBe(true);
    for (const scale of [scaleOf(TINY, 1), scaleOf(REDUCED, 5)]) {
      const gen = inputs(scale, 9);
      for (let k = 0; k < 2_000; k++) {
        const t = gen.nextTransaction();
        expect(t.level).toBe(TPCC_LEVELS[t.op]);
        expect(app.lookup(t.op)!.args.safeParse(t.args).success).toBe(true);
      }
    }
  });

  it('is deterministic by seed', () => {
    const draw = (seed: number): TpccTransaction[] => {
      const gen = inputs(scaleOf(REDUCED, 20), seed);
      return Array.from({ length: 300 }, () => gen.nextTransaction());
    };
    expect(draw(42)).toEqual(draw(42));
    expect(draw(42)).not.toEqual(draw(43));
  });

  it('keeps a terminal at its home warehouse, and Stock-Level at its district (§2.4.1.1, §2.8.1.1)', () => {
    const gen = new TpccInputs({
      seed: 4,
      scale: scaleOf(REDUCED, 5),
      loadSeed: 3,
      home: { W_ID: 3, D_ID: 8 },
    });
    for (let k = 0; k < 1_000; k++) {
      const t = gen.nextTransaction();
      expect(t.args.W_ID).toBe(3);
      if (t.op === 'tpcc.stockLevel') expect(t.args.D_ID).toBe(8);
    }
  });
});

describe('New-Order inputs (§2.4.1)', () => {
  it('5 to 15 lines, quantities 1 to 10, and 1 % with an unused item in the last line', () => {
    const scale = scaleOf(REDUCED, 1);
    const gen = inputs(scale);
    let invalid = 0;
    const wrong: unknown[] = [];
    for (let k = 0; k < N; k++) {
      const a = gen.newOrder();
      if (a.lines.length < 5 || a.lines.length > 15) wrong.push(a);
      if (a.C_ID < 1 || a.C_ID > scale.customersPerDistrict) wrong.push(a);
      a.lines.forEach((l, i) => {
        if (l.OL_QUANTITY < 1 || l.OL_QUANTITY > 10 || l.OL_I_ID < 1) wrong.push(l);
        // One warehouse: every line is supplied by it.
        if (l.OL_SUPPLY_W_ID !== a.W_ID) wrong.push(l);
        if (l.OL_I_ID > scale.items) {
          invalid++;
          if (l.OL_I_ID !== scale.items + 1 || i !== a.lines.length - 1) wrong.push(a);
        }
      });
    }
    expect(wrong).toEqual([]);
    near(invalid / N, 0.01, N);
  });

  it('with W > 1, 1 % of lines come from another warehouse', () => {
    const scale = scaleOf(REDUCED, 5);
    const gen = inputs(scale);
    let lines = 0;
    let remote = 0;
    const wrong: unknown[] = [];
    for (let k = 0; k < N; k++) {
      const a = gen.newOrder();
      for (const l of a.lines) {
        lines++;
        if (l.OL_SUPPLY_W_ID < 1 || l.OL_SUPPLY_W_ID > 5) wrong.push(l);
        if (l.OL_SUPPLY_W_ID !== a.W_ID) remote++;
      }
    }
    expect(wrong).toEqual([]);
    near(remote / lines, 0.01, lines);
  });
});

describe('Payment and Order-Status inputs (§2.5.1, §2.6.1)', () => {
  it('Payment: 15 % remote customers when W > 1, 60 % by last name, 1.00 to 5,000.00', () => {
    const scale = scaleOf(REDUCED, 5);
    const gen = inputs(scale);
    let remote = 0;
    let byName = 0;
    const names = new Set(Array.from({ length: lastNameCount(scale) }, (_, n) => lastName(n)));
    for (let k = 0; k < N; k++) {
      const a = gen.payment();
      if (a.C_W_ID !== a.W_ID) remote++;
      else expect(a.C_D_ID).toBe(a.D_ID);
      if (a.customer.by === 'name') {
        byName++;
        expect(names.has(a.customer.C_LAST)).toBe(true);
      }
      expect(a.H_AMOUNT).toBeGreaterThanOrEqual(100);
      expect(a.H_AMOUNT).toBeLessThanOrEqual(500_000);
    }
    near(remote / N, 0.15, N);
    near(byName / N, 0.6, N);
  });

  it('Payment with one warehouse: the customer is always of it; 15 % of another district', () => {
    const gen = inputs(scaleOf(TINY, 1));
    let otherDistrict = 0;
    for (let k = 0; k < N; k++) {
      const a = gen.payment();
      expect(a.C_W_ID).toBe(1);
      if (a.C_D_ID !== a.D_ID) otherDistrict++;
    }
    // 15 % draw a district at random, and 9 in 10 of those differ from the home one.
    near(otherDistrict / N, 0.15 * 0.9, N);
  });

  it('Order-Status: 60 % by last name', () => {
    const gen = inputs(scaleOf(REDUCED, 2));
    let byName = 0;
    for (let k = 0; k < N; k++) if (gen.orderStatus().customer.by === 'name') byName++;
    near(byName / N, 0.6, N);
  });

  it('Delivery and Stock-Level: carrier 1 to 10, threshold 10 to 20', () => {
    const gen = inputs(scaleOf(REDUCED, 2));
    const carriers = new Set<number>();
    const thresholds = new Set<number>();
    for (let k = 0; k < 2_000; k++) {
      carriers.add(gen.delivery().O_CARRIER_ID);
      thresholds.add(gen.stockLevel().threshold);
    }
    expect([...carriers].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(Math.min(...thresholds)).toBe(10);
    expect(Math.max(...thresholds)).toBe(20);
    expect(thresholds.size).toBe(11);
  });
});

describe('NURand (§2.1.6) and its constants at each scale', () => {
  it("uses the spec's A at the spec's scale and scales A with the range otherwise", () => {
    expect(nurandA(SPEC)).toEqual({ cId: 1023, cLast: 255, olIId: 8191 });
    expect(nurandA(REDUCED)).toEqual({ cId: 127, cLast: 31, olIId: 1023 });
    expect(lastNameCount(SPEC)).toBe(1_000);
    expect(lastNameCount(REDUCED)).toBe(100);
  });

  it('stays in range, hits the whole range, and is skewed: the hottest 10 % of values get far more than 10 %', () => {
    for (const [scale, pick, lo, hi] of [
      [SPEC, (g: TpccInputs) => g.customerId(), 1, 3_000],
      [REDUCED, (g: TpccInputs) => g.customerId(), 1, 300],
      [REDUCED, (g: TpccInputs) => g.itemId(), 1, 10_000],
    ] as const) {
      const gen = inputs(scaleOf(scale, 1), 5);
      const counts = new Map<number, number>();
      const n = 50_000;
      for (let k = 0; k < n; k++) {
        const v = pick(gen);
        counts.set(v, (counts.get(v) ?? 0) + 1);
      }
      const keys = [...counts.keys()];
      expect(keys.every((v) => Number.isInteger(v) && v >= lo && v <= hi)).toBe(true);
      const range = hi - lo + 1;
      expect(counts.size).toBeGreaterThan(range * 0.25);
      const hottest = [...counts.values()].sort((a, b) => b - a).slice(0, range / 10);
      expect(hottest.reduce((s, c) => s + c, 0) / n).toBeGreaterThan(0.4);
    }
    const gen = inputs(scaleOf(REDUCED, 1));
    const names = new Set(Array.from({ length: 100 }, (_, n) => lastName(n)));
    const drawn = new Set(Array.from({ length: 5_000 }, () => gen.customerLast()));
    expect([...drawn].filter((n) => !names.has(n))).toEqual([]);
    expect(drawn.size).toBe(100);
  });

  it('C_RUN for C_LAST differs from C_LOAD by 65..119, never 96 or 112 (§2.1.6.1)', () => {
    for (let s = 0; s < 300; s++) {
      const cLoad = loadC(s, SPEC);
      const c = runC(1_000 + s, s, SPEC);
      const delta = Math.abs(c.cLast - cLoad);
      expect(delta).toBeGreaterThanOrEqual(65);
      expect(delta).toBeLessThanOrEqual(119);
      expect([96, 112]).not.toContain(delta);
      expect(c.cId).toBeLessThanOrEqual(1023);
      expect(c.olIId).toBeLessThanOrEqual(8191);
    }
    // A reduced scale keeps a C_RUN different from C_LOAD.
    for (let s = 0; s < 100; s++) {
      expect(runC(s + 7, s, REDUCED).cLast).not.toBe(loadC(s, REDUCED));
      expect(runC(s + 7, s, TINY).cLast).not.toBe(loadC(s, TINY));
    }
  });

  it('lastName spells the three digits in syllables (§4.3.2.3)', () => {
    expect(lastName(0)).toBe('BARBARBAR');
    expect(lastName(371)).toBe('PRICALLYOUGHT');
    expect(lastName(999)).toBe('EINGEINGEING');
    expect(() => lastName(1_000)).toThrow(RangeError);
  });

  it('the generator is seeded: random(x..y) is uniform and inclusive', () => {
    const r = new Rng(123);
    const seen = new Map<number, number>();
    for (let k = 0; k < 60_000; k++) {
      const v = r.int(1, 6);
      seen.set(v, (seen.get(v) ?? 0) + 1);
    }
    expect([...seen.keys()].sort()).toEqual([1, 2, 3, 4, 5, 6]);
    for (const c of seen.values()) near(c / 60_000, 1 / 6, 60_000);
    expect(new Rng(5).u32()).toBe(new Rng(5).u32());
    expect(Rng.derive(1, 2, 3).u32()).not.toBe(Rng.derive(1, 3, 2).u32());
  });
});
