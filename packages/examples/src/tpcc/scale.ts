import { z } from 'zod';
import { Rng } from './random.js';

/**
 * How big a TPC-C database is. The scale factor is the number of warehouses (§1.2.1, §4.2); every
 * warehouse has 10 districts. The per-warehouse cardinalities are the spec's (§4.3.3.1) in `SPEC`,
 * and smaller in `REDUCED` and `TINY`, because a Creek replica keeps its whole state in memory,
 * with every row as a deep-frozen JSON object, and a test machine may run three replicas in one
 * process.
 */
export const DISTRICTS_PER_WAREHOUSE = 10;

export interface Profile {
  /** ITEM rows, and STOCK rows per warehouse (spec 100,000). */
  readonly items: number;
  /** CUSTOMER rows per district (spec 3,000). */
  readonly customersPerDistrict: number;
  /** ORDER rows per district at load (spec 3,000); O_ID 1..this. */
  readonly ordersPerDistrict: number;
  /** The last this-many of those orders are undelivered, with a NEW-ORDER row (spec 900). */
  readonly newOrdersPerDistrict: number;
}

export interface Scale extends Profile {
  /** The scale factor W. */
  readonly warehouses: number;
}

/**
 * §4.3.3.1 as written: about 560,000 rows per warehouse plus 100,000 items (`rowCounts`), 589,000
 * keys with the parts of the split rows (keys.ts).
 */
export const SPEC: Profile = {
  items: 100_000,
  customersPerDistrict: 3_000,
  ordersPerDistrict: 3_000,
  newOrdersPerDistrict: 900,
};

/**
 * A tenth of the spec in every dimension: about 56,000 rows (59,000 keys) per warehouse plus
 * 10,000 items. A replica holds a row in about 1.7 KB of heap (measured once loaded, before the
 * split rows of keys.ts added 5 % more keys: 110 MB for 1 warehouse, 500 MB for 5), so 5
 * warehouses fit an in-memory replica on a small machine, where the spec's scale would take over
 * 1 GB per warehouse and replica. The ratios the transactions depend on are kept: 3 customers per
 * last name, 30 % of the loaded orders undelivered, orders = customers (each customer has exactly
 * one order at load).
 */
export const REDUCED: Profile = {
  items: 10_000,
  customersPerDistrict: 300,
  ordersPerDistrict: 300,
  newOrdersPerDistrict: 90,
};

/**
 * For tests: about 6,600 rows (6,900 keys) for one warehouse, loaded through a cluster in a second
 * or two.
 */
export const TINY: Profile = {
  items: 1_000,
  customersPerDistrict: 30,
  ordersPerDistrict: 30,
  newOrdersPerDistrict: 9,
};

const count = z.number().int().positive().max(10_000_000);

/** A scale as it travels in `tpcc.load`'s arguments. */
export const ScaleSchema = z
  .object({
    warehouses: z.number().int().positive().max(10_000),
    items: count,
    customersPerDistrict: count,
    ordersPerDistrict: count,
    newOrdersPerDistrict: z.number().int().nonnegative().max(10_000_000),
  })
  .refine((s) => s.newOrdersPerDistrict <= s.ordersPerDistrict, {
    message: 'newOrdersPerDistrict must not exceed ordersPerDistrict',
    path: ['newOrdersPerDistrict'],
  });

export function scaleOf(profile: Profile, warehouses: number): Scale {
  return ScaleSchema.parse({ ...profile, warehouses });
}

/**
 * How many distinct last names a district uses. The spec has 1,000 names for 3,000 customers
 * (§4.3.2.3: customers 1..1,000 take names 0..999 in order, the rest NURand(255, 0, 999)), so a
 * by-name lookup finds 3 customers on average. A smaller district keeps that ratio: with 300
 * customers, names 0..99. Every name in the range belongs to at least one customer (the first
 * ones take them in order), so a by-name lookup drawn from the range always finds someone.
 */
export function lastNameCount(scale: Profile): number {
  return Math.max(1, Math.min(1_000, Math.ceil(scale.customersPerDistrict / 3)));
}

/** The constant A of each NURand use (§2.1.6), for this scale. */
export interface NURandA {
  /** For C_ID in [1, customersPerDistrict]; spec 1023 for [1, 3000]. */
  readonly cId: number;
  /** For C_LAST's number in [0, lastNameCount − 1]; spec 255 for [0, 999]. */
  readonly cLast: number;
  /** For OL_I_ID in [1, items]; spec 8191 for [1, 100000]. */
  readonly olIId: number;
}

/**
 * A follows the range: A + 1 is the power of two nearest (in log scale) to the spec's A + 1 times
 * range / spec range. So the spec's ranges give the spec's A exactly, and a range ten times smaller
 * gives an A about ten times smaller: the share of the range that NURand's OR makes hot stays about
 * the same. (Keeping A = 1023 for 300 customers would OR every draw into almost all ones.)
 */
export function nurandA(scale: Profile): NURandA {
  return {
    cId: scaledA(1023, 3_000, scale.customersPerDistrict),
    cLast: scaledA(255, 1_000, lastNameCount(scale)),
    olIId: scaledA(8191, 100_000, scale.items),
  };
}

function scaledA(specA: number, specRange: number, range: number): number {
  const ideal = ((specA + 1) * range) / specRange;
  return 2 ** Math.max(0, Math.round(Math.log2(ideal))) - 1;
}

/** The constant C of each NURand use: drawn once per load and once per run (§2.1.6). */
export interface NURandC {
  readonly cId: number;
  readonly cLast: number;
  readonly olIId: number;
}

/** C_LOAD for C_LAST: the load's constant, a function of the load's seed. */
export function loadC(loadSeed: number, scale: Profile): number {
  return Rng.derive(loadSeed, 0xc1a57).int(0, nurandA(scale).cLast);
}

/**
 * The run's constants. C for C_ID and OL_I_ID: random in [0, A]. C_RUN for C_LAST must differ from
 * C_LOAD (§2.1.6.1): |C_RUN − C_LOAD| in [65, 119] and not 96 or 112, for A = 255. For another A the
 * bounds and the two excluded deltas are scaled by (A + 1) / 256; where no such C_RUN exists in
 * [0, A] (a tiny A), any C_RUN ≠ C_LOAD does, or C_LOAD itself when A = 0.
 */
export function runC(runSeed: number, loadSeed: number, scale: Profile): NURandC {
  const a = nurandA(scale);
  const rng = Rng.derive(runSeed, 0xc0de);
  const cLoad = loadC(loadSeed, scale);
  const k = (a.cLast + 1) / 256;
  const lo = Math.ceil(65 * k);
  const hi = Math.floor(119 * k);
  const excluded = new Set([96 * k, 112 * k]);
  const ok = (c: number): boolean => {
    const delta = Math.abs(c - cLoad);
    return delta >= lo && delta <= hi && !excluded.has(delta);
  };
  const candidates = Array.from({ length: a.cLast + 1 }, (_, c) => c).filter(ok);
  const fallback = Array.from({ length: a.cLast + 1 }, (_, c) => c).filter((c) => c !== cLoad);
  const pool = candidates.length > 0 ? candidates : fallback.length > 0 ? fallback : [cLoad];
  return {
    cId: rng.int(0, a.cId),
    cLast: pool[rng.int(0, pool.length - 1)]!,
    olIId: rng.int(0, a.olIId),
  };
}

/**
 * Money is kept in integer cents, so sums are exact and the consistency conditions compare with
 * `===`. The spec's D_YTD of 30,000.00 is exactly its 3,000 customers' initial payments of 10.00
 * (one HISTORY row each); a smaller district starts at customers × 10.00, so that W_YTD = sum(D_YTD)
 * = sum(H_AMOUNT) (§3.3.2.1, .8, .9) hold from the start at every scale.
 */
export const INITIAL_PAYMENT_CENTS = 1_000;

export function initialDistrictYtd(scale: Profile): number {
  return scale.customersPerDistrict * INITIAL_PAYMENT_CENTS;
}

export function initialWarehouseYtd(scale: Profile): number {
  return DISTRICTS_PER_WAREHOUSE * initialDistrictYtd(scale);
}

/**
 * The first O_ID of the undelivered orders at load: the spec's 2,101 = 3,000 − 900 + 1. Orders
 * before it are delivered (carrier set, lines with a delivery date and amount 0.00).
 */
export function firstUndelivered(scale: Profile): number {
  return scale.ordersPerDistrict - scale.newOrdersPerDistrict + 1;
}

/**
 * The rows a load writes, per table, and the keys they take. ORDER-LINE is the expected count
 * (O_OL_CNT is random in [5, 15], mean 10). WAREHOUSE, DISTRICT and CUSTOMER count rows (one key
 * each, holding the columns only the load writes); the other keys of those rows, the parts the
 * transactions update (keys.ts), are counted as `TABLE/part`. The two secondary indexes (customers
 * by last name, orders by customer) add a key per customer and per order. `total` is the number
 * of keys.
 */
export function rowCounts(scale: Scale): Record<string, number> {
  const w = scale.warehouses;
  const districts = w * DISTRICTS_PER_WAREHOUSE;
  const customers = districts * scale.customersPerDistrict;
  const orders = districts * scale.ordersPerDistrict;
  const counts: Record<string, number> = {
    WAREHOUSE: w,
    'WAREHOUSE/ytd': w,
    DISTRICT: districts,
    'DISTRICT/ytd': districts,
    'DISTRICT/next': districts,
    CUSTOMER: customers,
    'CUSTOMER/bal': customers,
    HISTORY: customers,
    'NEW-ORDER': districts * scale.newOrdersPerDistrict,
    ORDER: orders,
    'ORDER-LINE': orders * 10,
    ITEM: scale.items,
    STOCK: w * scale.items,
    'index: customer by last name': customers,
    'index: order by customer': orders,
  };
  counts.total = Object.values(counts).reduce((a, b) => a + b, 0);
  return counts;
}
