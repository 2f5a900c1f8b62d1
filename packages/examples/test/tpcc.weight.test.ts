import type { JsonValue } from '@creek/app';
import { connectInMemory } from '@creek/client/memory';
import { describe, expect, it } from 'vitest';
import app from '../src/tpcc/app.js';
import { checkConsistency } from '../src/tpcc/consistency.js';
import { TpccInputs } from '../src/tpcc/inputs.js';
import { loadPlan } from '../src/tpcc/population.js';
import { scaleOf, TINY } from '../src/tpcc/scale.js';
import { MAX_WORK, TPCC_WEIGHTS, work, workSeed } from '../src/tpcc/weight.js';
import { SerialDb } from './support/tpcc-serial.js';

/**
 * A transaction's weight (weight.ts): extra rounds of a pure integer hash, named in the op's
 * arguments, whose result is in the answer. It must change nothing else: the same transactions
 * with a weight read, write and answer what they do without one, and every replica computes the
 * same value.
 */
const LOAD_SEED = 7;
const scale = scaleOf(TINY, 2);
const ROUNDS = 1_000;

function loaded(): SerialDb {
  const db = new SerialDb(app);
  for (const chunk of loadPlan(scale, LOAD_SEED)) db.must('tpcc.load', chunk);
  return db;
}

/** The answer without the weight's field. */
function unweighted(value: JsonValue): JsonValue {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const rest = { ...value };
  delete rest.work;
  return rest;
}

describe('TPC-C transaction weight', () => {
  it('the work is a pure function of its rounds and seed', () => {
    expect(work(ROUNDS, 42)).toBe(work(ROUNDS, 42));
    expect(work(ROUNDS, 42)).not.toBe(work(ROUNDS, 43));
    expect(work(ROUNDS, 42)).not.toBe(work(ROUNDS + 1, 42));
    expect(work(0, 42)).toBe(42);
    // Zero is no fixed point: a zero seed still does work.
    expect(work(ROUNDS, 0)).not.toBe(0);
    expect(workSeed({ W_ID: 1, work: 5 })).toBe(workSeed({ W_ID: 1, work: 5 }));
    expect(workSeed({ W_ID: 1, work: 5 })).not.toBe(workSeed({ W_ID: 2, work: 5 }));
  });

  it('the named weights grow, and fit under the bound an op accepts', () => {
    expect(TPCC_WEIGHTS.today).toBe(0);
    expect(TPCC_WEIGHTS.paper).toBeGreaterThan(0);
    expect(TPCC_WEIGHTS.paper5).toBeGreaterThan(4 * TPCC_WEIGHTS.paper);
    expect(TPCC_WEIGHTS.paper5).toBeLessThanOrEqual(MAX_WORK);
  });

  it('a weighted generator draws the same transactions, each with the weight in its arguments', () => {
    const plain = new TpccInputs({ seed: 3, scale, loadSeed: LOAD_SEED });
    const heavy = new TpccInputs({ seed: 3, scale, loadSeed: LOAD_SEED, work: ROUNDS });
    for (let k = 0; k < 200; k++) {
      const a = plain.nextTransaction();
      const b = heavy.nextTransaction();
      expect(a.args).not.toHaveProperty('work');
      expect(b).toEqual({ ...a, args: { ...a.args, work: ROUNDS } });
    }
    for (const bad of [-1, 1.5, MAX_WORK + 1, Number.NaN])
      expect(() => new TpccInputs({ seed: 3, scale, loadSeed: LOAD_SEED, work: bad })).toThrow(
        RangeError,
      );
  });

  it('weighted transactions answer what unweighted ones do, plus the work, and leave the same consistent state', () => {
    const plain = loaded();
    const heavy = loaded();
    const a = new TpccInputs({ seed: 9, scale, loadSeed: LOAD_SEED });
    const b = new TpccInputs({ seed: 9, scale, loadSeed: LOAD_SEED, work: ROUNDS });
    const ops = new Set<string>();
    for (let k = 0; k < 400; k++) {
      const t = a.nextTransaction();
      const u = b.nextTransaction();
      ops.add(t.op);
      const r = plain.run(t.op, t.args);
      const s = heavy.run(u.op, u.args);
      expect(s.ok).toBe(r.ok);
      if (!r.ok || !s.ok) continue;
      expect(r.value).not.toHaveProperty('work');
      const parsed: unknown = app.lookup(u.op)!.args.parse(u.args);
      expect(s.value).toMatchObject({ work: work(ROUNDS, workSeed(parsed)) });
      expect(unweighted(s.value)).toEqual(r.value);
    }
    expect(ops.size).toBe(5);
    expect([...heavy.data]).toEqual([...plain.data]);
    expect(checkConsistency(heavy.data)).toEqual([]);
  });

  it.each([
    ['negative', -1],
    ['fractional', 1.5],
    ['beyond the bound', MAX_WORK + 1],
    ['a string', '1000'],
  ])('a client that sends %s work is refused', async (_, bad) => {
    const { client, cluster } = connectInMemory({ app });
    try {
      for (const chunk of loadPlan(scaleOf(TINY, 1), LOAD_SEED))
        await client.invokeStrong('tpcc.load', chunk);
      const args = { W_ID: 1, O_CARRIER_ID: 3, work: bad } as unknown as {
        W_ID: number;
        O_CARRIER_ID: number;
      };
      await expect(client.invokeStrong('tpcc.delivery', args)).rejects.toThrow(/work/);
      const ok = await client.invokeStrong('tpcc.delivery', { W_ID: 1, O_CARRIER_ID: 3, work: 10 });
      expect(ok).toMatchObject({ W_ID: 1, work: expect.any(Number) });
    } finally {
      cluster.close();
    }
  });
});
