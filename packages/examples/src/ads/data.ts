/**
 * The data set and the key choice of the load, generated from a seed so that a run can be repeated.
 * Shaped after Correctables §6.3.2 (100k profiles, 230k ads, 1 to 40 references per profile),
 * scaled down by default so a laptop seeds it in a second; keys are drawn from a Zipfian
 * distribution as in YCSB, which the paper's experiments ran on.
 */
import type { Ad, Profile } from './app.js';

import { seededRng, type Rng } from '../shared/random.js';

export { seededRng, type Rng };

/** An integer in [lo, hi]. */
export function randomInt(rng: Rng, lo: number, hi: number): number {
  return lo + Math.floor(rng() * (hi - lo + 1));
}

export interface DatasetOptions {
  readonly users: number;
  readonly ads: number;
  readonly minRefs: number;
  readonly maxRefs: number;
  readonly seed: number;
}

export const userId = (i: number): string => `u${i}`;
export const adId = (i: number): string => `ad${i}`;

/** `count` distinct ad ids out of `ads`, in random order. */
export function randomRefs(rng: Rng, ads: number, count: number): string[] {
  if (count > ads) throw new RangeError(`cannot pick ${count} distinct ads out of ${ads}`);
  const picked = new Set<number>();
  while (picked.size < count) picked.add(randomInt(rng, 0, ads - 1));
  return [...picked].map(adId);
}

const ADVERTISERS = ['Northwind', 'Contoso', 'Fabrikam', 'Tailspin', 'Litware', 'Adatum'];
const PRODUCTS = ['hiking boots', 'a city break', 'espresso beans', 'running shoes', 'a road bike'];
const OFFERS = ['20% off', 'free shipping on', 'two for one on', 'early access to', 'a gift with'];
const NAMES = ['Ada', 'Grace', 'Alan', 'Barbara', 'Edsger', 'Leslie', 'Frances', 'Tony'];

export function makeAd(i: number, rng: Rng): Ad {
  const advertiser = ADVERTISERS[randomInt(rng, 0, ADVERTISERS.length - 1)]!;
  const product = PRODUCTS[randomInt(rng, 0, PRODUCTS.length - 1)]!;
  const offer = OFFERS[randomInt(rng, 0, OFFERS.length - 1)]!;
  return {
    id: adId(i),
    advertiser,
    headline: `${offer} ${product}`,
    body: `{name}, ${advertiser} has ${offer} ${product} this week.`,
    url: `https://ads.example/${adId(i)}`,
  };
}

export interface Dataset {
  readonly options: DatasetOptions;
  readonly ads: Ad[];
  readonly profiles: Profile[];
}

/** The same options give the same data set. */
export function makeDataset(options: DatasetOptions): Dataset {
  const { users, ads, minRefs, maxRefs, seed } = options;
  if (!(minRefs >= 0 && minRefs <= maxRefs && maxRefs <= ads))
    throw new RangeError(`need 0 ≤ minRefs ≤ maxRefs ≤ ads, got ${minRefs}, ${maxRefs}, ${ads}`);
  const rng = seededRng(seed);
  return {
    options,
    ads: Array.from({ length: ads }, (_, i) => makeAd(i, rng)),
    profiles: Array.from({ length: users }, (_, i) => ({
      user: userId(i),
      name: NAMES[i % NAMES.length]!,
      adIds: randomRefs(rng, ads, randomInt(rng, minRefs, maxRefs)),
    })),
  };
}

/**
 * Zipfian integers in [0, n): 0 is the most popular (YCSB's generator, after Gray et al.,
 * "Quickly generating billion-record synthetic databases", SIGMOD '94). θ = 0.99 is YCSB's
 * default: with 1,000 keys the most popular one takes about 13 % of the draws.
 */
export class Zipf {
  private readonly alpha: number;
  private readonly zetan: number;
  private readonly eta: number;

  constructor(
    private readonly n: number,
    private readonly rng: Rng,
    private readonly theta = 0.99,
  ) {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`Zipf needs n ≥ 1, got ${n}`);
    let zetan = 0;
    for (let i = 1; i <= n; i++) zetan += 1 / Math.pow(i, theta);
    const zeta2 = 1 + 1 / Math.pow(2, theta);
    this.zetan = zetan;
    this.alpha = 1 / (1 - theta);
    this.eta = (1 - Math.pow(2 / n, 1 - theta)) / (1 - zeta2 / zetan);
  }

  next(): number {
    const u = this.rng();
    const uz = u * this.zetan;
    if (uz < 1) return 0;
    if (uz < 1 + Math.pow(0.5, this.theta)) return Math.min(1, this.n - 1);
    const k = Math.floor(this.n * Math.pow(this.eta * u - this.eta + 1, this.alpha));
    return Math.min(k, this.n - 1);
  }
}
