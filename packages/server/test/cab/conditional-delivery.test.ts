import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConditionalDelivery } from '@creek/replica/cab/conditional-delivery.js';
import { castsOf, type Batch, type CastId } from '@creek/replica/cab/messages.js';
import { opKey, type OpId } from '@creek/replica/core/op-id.js';

const id = (replica: number, eventNo: number): OpId => ({ replica, eventNo });
const cast = (replica: number, eventNo: number, prevStrong = 0): CastId => ({
  id: id(replica, eventNo),
  prevStrong,
});

const always = (): boolean => true;

/** Delivers everything the predicate lets through, in order; returns the keys. */
function drain(d: ConditionalDelivery, predicate: (id: OpId) => boolean = always): string[] {
  const out: string[] = [];
  for (let next = d.next(predicate); next !== null; next = d.next(predicate)) {
    d.markDelivered(next);
    out.push(opKey(next));
  }
  return out;
}

describe('ConditionalDelivery', () => {
  it('delivers in instance order, then batch order, whatever order instances are decided in', () => {
    const d = new ConditionalDelivery();
    d.decide(2, [cast(3, 1)]);
    expect(drain(d)).toEqual([]);
    d.decide(0, [cast(1, 1), cast(2, 1)]);
    expect(drain(d)).toEqual(['1.1', '2.1']); // instance 1 is missing: 2 waits
    d.decide(1, [cast(1, 2, 1), cast(4, 1)]);
    expect(drain(d)).toEqual(['1.2', '4.1', '3.1']);
    expect(d.backlog()).toBe(0);
  });

  it('passes over empty batches (gaps a new leader filled)', () => {
    const d = new ConditionalDelivery();
    d.decide(0, []);
    d.decide(1, [cast(1, 1)]);
    d.decide(2, []);
    d.decide(3, [cast(1, 2, 1)]);
    expect(drain(d)).toEqual(['1.1', '1.2']);
    expect(d.deliveredBelow()).toBe(4);
  });

  it('holds the head while its predicate is false, and everything after it', () => {
    const d = new ConditionalDelivery();
    d.decide(0, [cast(1, 1), cast(2, 1), cast(3, 1)]);
    d.decide(1, [cast(1, 2, 1)]);
    const notYet = (x: OpId): boolean => opKey(x) !== '2.1';
    expect(drain(d, notYet)).toEqual(['1.1']);
    expect(d.next(notYet)).toBeNull();
    expect(d.next(notYet)).toBeNull(); // asking again changes nothing
    expect(d.backlog()).toBe(3);
    expect(d.deliveredBelow()).toBe(0);
    // Only the head is offered: a later id that could go is not.
    const seen: string[] = [];
    d.next((x) => {
      seen.push(opKey(x));
      return false;
    });
    expect(seen).toEqual(['2.1']);
    expect(drain(d)).toEqual(['2.1', '3.1', '1.2']);
  });

  it('markDelivered only takes the head', () => {
    const d = new ConditionalDelivery();
    expect(() => d.markDelivered(id(1, 1))).toThrow();
    d.decide(0, [cast(1, 1), cast(2, 1)]);
    expect(() => d.markDelivered(id(2, 1))).toThrow();
    d.markDelivered(id(1, 1));
    expect(() => d.markDelivered(id(1, 1))).toThrow();
    expect(drain(d)).toEqual(['2.1']);
  });

  it('drops an id decided twice: in the stream, delivered, or waiting', () => {
    const d = new ConditionalDelivery();
    d.decide(0, [cast(1, 1)]);
    d.decide(1, [cast(2, 1), cast(1, 1)]); // again while undelivered
    expect(drain(d)).toEqual(['1.1', '2.1']);
    d.decide(2, [cast(1, 1), cast(2, 1)]); // again after delivery
    expect(drain(d)).toEqual([]);
    d.decide(3, [cast(3, 2, 1)]); // waits for 3.1
    d.decide(4, [cast(3, 2, 1)]); // again while waiting
    expect(d.backlog()).toBe(1);
    d.decide(5, [cast(3, 1)]);
    d.decide(6, [cast(3, 2, 1), cast(3, 1)]); // again after both
    expect(drain(d)).toEqual(['3.1', '3.2']);
    expect(d.backlog()).toBe(0);
  });

  it('ignores a second decision for an instance and instances it already passed', () => {
    const d = new ConditionalDelivery();
    d.decide(1, [cast(2, 1)]);
    d.decide(1, [cast(3, 1)]);
    d.decide(0, [cast(1, 1)]);
    d.decide(0, [cast(4, 1)]);
    expect(drain(d)).toEqual(['1.1', '2.1']);
  });

  it('an origin`s later strong op decided before its predecessor waits and comes right after it', () => {
    const d = new ConditionalDelivery();
    d.decide(0, [cast(1, 2, 1)]); // 1.2 before 1.1
    d.decide(1, [cast(2, 1)]);
    expect(drain(d)).toEqual(['2.1']);
    expect(d.backlog()).toBe(1);
    d.decide(2, [cast(1, 1), cast(3, 1)]);
    expect(drain(d)).toEqual(['1.1', '1.2', '3.1']);
  });

  it('a whole chain decided backwards comes out forwards (event numbers with gaps)', () => {
    const d = new ConditionalDelivery();
    // Strong ops 1.3, 1.7, 1.12 (weak ops in between take the other event numbers).
    d.decide(0, [cast(1, 12, 7)]);
    d.decide(1, [cast(2, 1)]);
    d.decide(2, [cast(1, 7, 3)]);
    d.decide(3, [cast(2, 4, 1)]);
    expect(drain(d)).toEqual(['2.1', '2.4']);
    d.decide(4, [cast(1, 3)]);
    expect(drain(d)).toEqual(['1.3', '1.7', '1.12']);
  });

  it('skipTo jumps past instances every replica delivered', () => {
    const d = new ConditionalDelivery();
    d.decide(0, [cast(1, 1)]);
    d.decide(2, [cast(2, 1)]);
    d.decide(3, [cast(3, 1)]);
    expect(drain(d)).toEqual(['1.1']);
    d.skipTo(3); // instances 1 and 2 are gone; 3 is next
    expect(drain(d)).toEqual(['3.1']);
    expect(d.deliveredBelow()).toBe(4);
    d.skipTo(2); // behind: nothing happens
    d.decide(2, [cast(4, 1)]);
    d.decide(4, [cast(5, 1)]);
    expect(drain(d)).toEqual(['5.1']);
  });

  it('a restarted stream starts at its first instance and knows what it delivered', () => {
    const d = new ConditionalDelivery(5, [id(1, 3), id(2, 1)]);
    d.decide(4, [cast(9, 1)]); // below the first instance
    d.decide(5, [cast(1, 3, 2), cast(1, 4, 3), cast(2, 1), cast(2, 2, 1)]);
    expect(drain(d)).toEqual(['1.4', '2.2']);
    expect(d.hasOrdered(id(1, 2))).toBe(true);
    expect(d.hasOrdered(id(9, 1))).toBe(false);
    expect(d.deliveredBelow()).toBe(6);
  });

  it('deliveredBelow: the first instance with an id not delivered here', () => {
    const d = new ConditionalDelivery();
    expect(d.deliveredBelow()).toBe(0);
    d.decide(0, [cast(1, 1)]);
    expect(d.deliveredBelow()).toBe(0);
    drain(d);
    expect(d.deliveredBelow()).toBe(1);
    d.decide(2, [cast(2, 1)]); // instance 1 undecided
    expect(d.deliveredBelow()).toBe(1);
    d.decide(1, [cast(3, 2, 1)]); // waits for 3.1
    expect(drain(d)).toEqual(['2.1']);
    expect(d.deliveredBelow()).toBe(1);
    d.decide(3, [cast(3, 1)]);
    expect(drain(d)).toEqual(['3.1', '3.2']);
    expect(d.deliveredBelow()).toBe(4);
  });

  // Regression test for a bug fixed in bcad11e (also reproduced independently here):
  // deliveredBelow() looked only at the head of the stream, so an id that had waited and joined
  // the stream behind ids of later instances was counted as delivered.
  it('deliveredBelow counts an id that waited and sits behind later instances in the stream', () => {
    const d = new ConditionalDelivery();
    d.decide(0, [cast(2, 2, 1)]); // waits for 2.1
    d.decide(1, [cast(1, 1), cast(2, 1)]); // stream: 1.1 (1), 2.1 (1), 2.2 (0)
    const hold = (x: OpId): boolean => opKey(x) !== '2.1';
    expect(drain(d, hold)).toEqual(['1.1']);
    expect(d.deliveredBelow()).toBe(0);
    expect(drain(d)).toEqual(['2.1', '2.2']);
    expect(d.deliveredBelow()).toBe(2);
  });

  it('hasOrdered: decided and admitted (delivered, in the stream, or waiting)', () => {
    const d = new ConditionalDelivery();
    expect(d.hasOrdered(id(1, 1))).toBe(false);
    d.decide(1, [cast(1, 1)]); // beyond a gap: decided, not admitted yet
    expect(d.hasOrdered(id(1, 1))).toBe(false);
    d.decide(0, [cast(2, 2, 1)]); // waiting
    expect(d.hasOrdered(id(2, 2))).toBe(true);
    expect(d.hasOrdered(id(2, 1))).toBe(false);
    expect(d.hasOrdered(id(1, 1))).toBe(true); // now in the stream, undelivered
    expect(drain(d)).toEqual(['1.1']);
    expect(d.hasOrdered(id(1, 1))).toBe(true);
    expect(d.hasOrdered(id(1, 2))).toBe(false);
  });

  it('keeps working across the stream compaction (thousands of deliveries)', () => {
    const d = new ConditionalDelivery();
    const got: string[] = [];
    for (let i = 0; i < 3_000; i++) {
      d.decide(i, [cast(i % 3, Math.floor(i / 3) + 1, Math.floor(i / 3))]);
      if (i % 7 === 0) got.push(...drain(d));
    }
    got.push(...drain(d));
    expect(got).toHaveLength(3_000);
    expect(new Set(got).size).toBe(3_000);
    expect(d.backlog()).toBe(0);
    expect(d.deliveredBelow()).toBe(3_000);
  });
});

// ------------------------------------------------------------------------------------ property

interface Scenario {
  /** Every cast, each once, per origin in chain order. */
  readonly chains: readonly (readonly CastId[])[];
  /** The decided sequence: instance i holds batches[i]. */
  readonly batches: readonly Batch[];
  /** The order in which the instances are decided (a permutation of their numbers). */
  readonly arrival: readonly number[];
  /** Ids whose predicate is false until released. */
  readonly held: ReadonlySet<string>;
}

const scenarioArb: fc.Arbitrary<Scenario> = fc
  .array(fc.array(fc.integer({ min: 1, max: 3 }), { maxLength: 8 }), {
    minLength: 1,
    maxLength: 4,
  })
  .map((gapsPerOrigin) =>
    gapsPerOrigin.map((gaps, origin) => {
      const chain: CastId[] = [];
      let prev = 0;
      for (const g of gaps) {
        chain.push(cast(origin + 1, prev + g, prev));
        prev += g;
      }
      return chain;
    }),
  )
  .chain((chains) => {
    const all = chains.flat();
    return fc.record({
      chains: fc.constant(chains),
      order: fc.shuffledSubarray(all, { minLength: all.length, maxLength: all.length }),
      dups: fc.array(fc.record({ which: fc.nat(), at: fc.nat() }), { maxLength: 6 }),
      sizes: fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 40 }),
      arrivalKeys: fc.array(fc.nat(), { maxLength: 40 }),
      held: fc.subarray(all.map((x) => opKey(x.id))),
    });
  })
  .map(({ chains, order, dups, sizes, arrivalKeys, held }) => {
    const all = chains.flat();
    const seq = [...order];
    if (all.length > 0) {
      for (const { which, at } of dups)
        seq.splice(at % (seq.length + 1), 0, all[which % all.length]!);
    }
    const batches: Batch[] = [];
    let k = 0;
    for (let pos = 0; pos < seq.length;) {
      const size = sizes[k++] ?? 1;
      batches.push(seq.slice(pos, pos + size));
      pos += size;
    }
    const arrival = batches
      .map((_, i) => i)
      .sort((a, b) => (arrivalKeys[a] ?? 0) - (arrivalKeys[b] ?? 0) || a - b);
    return { chains, batches, arrival, held: new Set(held) };
  });

/** Every instance below deliveredBelow() has all its ids delivered. */
function checkDeliveredBelow(d: ConditionalDelivery, s: Scenario, delivered: Set<string>): void {
  const below = d.deliveredBelow();
  for (let i = 0; i < below; i++) {
    for (const c of castsOf(s.batches[i] ?? [])) {
      if (!delivered.has(opKey(c.id)))
        throw new Error(`deliveredBelow ${below} but ${opKey(c.id)} of instance ${i} is not`);
    }
  }
}

/** Decides in arrival order, delivering (except held ids) after each; then releases the held. */
function runScenario(s: Scenario, holdSome: boolean): string[] {
  const d = new ConditionalDelivery();
  const out: string[] = [];
  const delivered = new Set<string>();
  const pred = (x: OpId): boolean => !holdSome || !s.held.has(opKey(x));
  const deliver = (p: (x: OpId) => boolean): void => {
    for (let next = d.next(p); next !== null; next = d.next(p)) {
      d.markDelivered(next);
      out.push(opKey(next));
      delivered.add(opKey(next));
      checkDeliveredBelow(d, s, delivered);
    }
  };
  for (const i of s.arrival) {
    d.decide(i, s.batches[i]!);
    deliver(pred);
    checkDeliveredBelow(d, s, delivered);
  }
  deliver(always);
  expect(d.backlog()).toBe(0);
  expect(d.deliveredBelow()).toBe(s.batches.length);
  for (const c of s.chains.flat()) expect(d.hasOrdered(c.id)).toBe(true);
  return out;
}

describe('ConditionalDelivery: random decided sequences of per-origin chains', () => {
  it('every id is delivered exactly once, each origin in chain order, the same stream for any arrival order', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const inOrder = runScenario({ ...s, arrival: s.batches.map((_, i) => i) }, false);
        const shuffled = runScenario(s, false);
        const withHolds = runScenario(s, true);

        const all = s.chains.flat().map((c) => opKey(c.id));
        expect([...inOrder].sort()).toEqual([...all].sort());
        expect(new Set(inOrder).size).toBe(inOrder.length);
        for (const chain of s.chains) {
          const keys = new Set(chain.map((c) => opKey(c.id)));
          expect(inOrder.filter((k) => keys.has(k))).toEqual(chain.map((c) => opKey(c.id)));
        }
        // A deterministic function of the decided sequence: every replica gets the same stream.
        expect(shuffled).toEqual(inOrder);
        expect(withHolds).toEqual(inOrder);
      }),
      { numRuns: 300 },
    );
  });
});
