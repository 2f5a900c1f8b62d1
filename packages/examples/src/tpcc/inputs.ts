import type {
  DeliveryArgs,
  NewOrderArgs,
  OrderStatusArgs,
  PaymentArgs,
  StockLevelArgs,
} from './app.js';
import { lastName, Rng } from './random.js';
import {
  DISTRICTS_PER_WAREHOUSE,
  lastNameCount,
  nurandA,
  runC,
  type NURandA,
  type NURandC,
  type Scale,
} from './scale.js';
import { MAX_WORK } from './weight.js';

/**
 * The client side of TPC-C: each transaction's random inputs, drawn as §2.4.1, §2.5.1, §2.6.1,
 * §2.7.1 and §2.8.1 say, and the mix of transactions (§5.2.3). What is drawn here travels in the
 * op's arguments; the op itself draws nothing (app.ts).
 */

export type TpccTransactionName =
  'tpcc.newOrder' | 'tpcc.payment' | 'tpcc.orderStatus' | 'tpcc.delivery' | 'tpcc.stockLevel';

/**
 * Percent of each transaction: §5.2.3's minimums (Payment 43 %, Order-Status, Delivery and
 * Stock-Level 4 % each), New-Order taking the remaining 45 %.
 */
export const TPCC_MIX: Readonly<Record<TpccTransactionName, number>> = {
  'tpcc.newOrder': 45,
  'tpcc.payment': 43,
  'tpcc.orderStatus': 4,
  'tpcc.delivery': 4,
  'tpcc.stockLevel': 4,
};

/**
 * The consistency level each transaction is invoked at in the benchmark:
 *
 * - Payment is strong: its answer (the customer's new balance, the credit data) is the one a clerk
 *   acts on, so it waits for the op's place in the committed order.
 * - New-Order and Delivery are weak: they are answered at once from the replica's tentative order.
 *   Two concurrent New-Orders at different replicas may both be told the same O_ID; once ordered,
 *   one of them is re-executed and gets the next one. The database is still the serial execution
 *   of the committed order, so the consistency conditions hold; only the first answer may change.
 * - Order-Status and Stock-Level are read-only ops read weak: answered from the replica's state,
 *   never ordered or gossiped (the spec lets Stock-Level read at a relaxed isolation, §2.8.2.3).
 */
export const TPCC_LEVELS = {
  'tpcc.newOrder': 'weak',
  'tpcc.payment': 'strong',
  'tpcc.orderStatus': 'weak',
  'tpcc.delivery': 'weak',
  'tpcc.stockLevel': 'weak',
} as const satisfies Record<TpccTransactionName, 'weak' | 'strong'>;

export type TpccTransaction =
  | { op: 'tpcc.newOrder'; args: NewOrderArgs; level: 'weak' }
  | { op: 'tpcc.payment'; args: PaymentArgs; level: 'strong' }
  | { op: 'tpcc.orderStatus'; args: OrderStatusArgs; level: 'weak' }
  | { op: 'tpcc.delivery'; args: DeliveryArgs; level: 'weak' }
  | { op: 'tpcc.stockLevel'; args: StockLevelArgs; level: 'weak' };

export interface InputOptions {
  /** Seeds this generator's draws and its run constants C (§2.1.6). */
  readonly seed: number;
  readonly scale: Scale;
  /** The seed the database was loaded with: C_RUN for C_LAST is chosen against its C_LOAD. */
  readonly loadSeed: number;
  /**
   * A terminal's fixed home warehouse and, for Stock-Level, district (§2.4.1.1, §2.8.1.1). Without
   * it, each transaction draws them uniformly, as if it came from a random terminal.
   */
  readonly home?: { readonly W_ID: number; readonly D_ID: number };
  /**
   * Rounds of extra work every transaction does (weight.ts, e.g. `TPCC_WEIGHTS.paper`), sent in
   * its arguments; 0 or absent: none, and the arguments are exactly TPC-C's inputs.
   */
  readonly work?: number;
}

/** A deterministic source of TPC-C transactions: the same options give the same sequence. */
export class TpccInputs {
  readonly a: NURandA;
  readonly c: NURandC;
  private readonly rng: Rng;
  private readonly scale: Scale;
  private readonly names: number;
  private readonly home: InputOptions['home'];
  /** `{ work }` to add to every transaction's arguments, or nothing. */
  private readonly weight: { work?: number };

  constructor(options: InputOptions) {
    this.scale = options.scale;
    this.home = options.home;
    const work = options.work ?? 0;
    if (!Number.isInteger(work) || work < 0 || work > MAX_WORK)
      throw new RangeError(`work must be a whole number from 0 to ${MAX_WORK}, not ${work}`);
    this.weight = work === 0 ? {} : { work };
    if (this.home !== undefined && this.home.W_ID > this.scale.warehouses)
      throw new RangeError(`home warehouse ${this.home.W_ID} of ${this.scale.warehouses}`);
    this.a = nurandA(this.scale);
    this.c = runC(options.seed, options.loadSeed, this.scale);
    this.names = lastNameCount(this.scale);
    this.rng = Rng.derive(options.seed, 0x7e4);
  }

  /** One transaction of the mix, with its arguments (and weight) and the level to invoke it at. */
  nextTransaction(): TpccTransaction {
    const t = this.draw();
    // The weight is added after the draw, so every weight gives the same sequence of inputs.
    return this.weight.work === undefined
      ? t
      : ({ ...t, args: { ...t.args, ...this.weight } } as TpccTransaction);
  }

  private draw(): TpccTransaction {
    let u = this.rng.int(1, 100);
    for (const op of Object.keys(TPCC_MIX) as TpccTransactionName[]) {
      u -= TPCC_MIX[op];
      if (u > 0) continue;
      switch (op) {
        case 'tpcc.newOrder':
          return { op, args: this.newOrder(), level: TPCC_LEVELS[op] };
        case 'tpcc.payment':
          return { op, args: this.payment(), level: TPCC_LEVELS[op] };
        case 'tpcc.orderStatus':
          return { op, args: this.orderStatus(), level: TPCC_LEVELS[op] };
        case 'tpcc.delivery':
          return { op, args: this.delivery(), level: TPCC_LEVELS[op] };
        case 'tpcc.stockLevel':
          return { op, args: this.stockLevel(), level: TPCC_LEVELS[op] };
      }
    }
    throw new Error('TPCC_MIX does not add up to 100');
  }

  /** §2.4.1. */
  newOrder(): NewOrderArgs {
    const w = this.warehouse();
    const count = this.rng.int(5, 15);
    // §2.4.1.4: 1 % of New-Orders name an unused item in their last line, and are rolled back.
    const rollback = this.rng.int(1, 100) === 1;
    const lines = Array.from({ length: count }, (_, k) => {
      const unused = rollback && k === count - 1;
      return {
        OL_I_ID: unused ? this.scale.items + 1 : this.itemId(),
        // §2.4.1.5: 1 % of lines are supplied by another warehouse, when there is one.
        OL_SUPPLY_W_ID: this.rng.int(1, 100) === 1 ? this.otherWarehouse(w) : w,
        OL_QUANTITY: this.rng.int(1, 10),
      };
    });
    return { W_ID: w, D_ID: this.district(), C_ID: this.customerId(), lines };
  }

  /** §2.5.1. */
  payment(): PaymentArgs {
    const w = this.warehouse();
    const d = this.district();
    // §2.5.1.2: 85 % pay at their home district; 15 % at another warehouse's (when W > 1; with
    // one warehouse, another district of it).
    const home = this.rng.int(1, 100) <= 85;
    const cW = home ? w : this.otherWarehouse(w);
    const cD = home ? d : this.district();
    return {
      W_ID: w,
      D_ID: d,
      C_W_ID: cW,
      C_D_ID: cD,
      customer: this.customer(),
      H_AMOUNT: this.rng.int(100, 500_000),
    };
  }

  /** §2.6.1. */
  orderStatus(): OrderStatusArgs {
    return { W_ID: this.warehouse(), D_ID: this.district(), customer: this.customer() };
  }

  /** §2.7.1. */
  delivery(): DeliveryArgs {
    return { W_ID: this.warehouse(), O_CARRIER_ID: this.rng.int(1, 10) };
  }

  /** §2.8.1: the terminal's own warehouse and district. */
  stockLevel(): StockLevelArgs {
    return {
      W_ID: this.warehouse(),
      D_ID: this.home?.D_ID ?? this.district(),
      threshold: this.rng.int(10, 20),
    };
  }

  /** NURand(1023, 1, 3000) at the spec's scale (§2.1.6). */
  customerId(): number {
    return this.rng.nurand(this.a.cId, 1, this.scale.customersPerDistrict, this.c.cId);
  }

  /** A name from NURand(255, 0, 999) at the spec's scale (§2.5.1.2, §4.3.2.3). */
  customerLast(): string {
    return lastName(this.rng.nurand(this.a.cLast, 0, this.names - 1, this.c.cLast));
  }

  /** NURand(8191, 1, 100000) at the spec's scale (§2.4.1.5). */
  itemId(): number {
    return this.rng.nurand(this.a.olIId, 1, this.scale.items, this.c.olIId);
  }

  /** §2.5.1.2 and §2.6.1.2: by last name 60 % of the time, else by C_ID. */
  private customer(): PaymentArgs['customer'] {
    return this.rng.int(1, 100) <= 60
      ? { by: 'name', C_LAST: this.customerLast() }
      : { by: 'id', C_ID: this.customerId() };
  }

  private warehouse(): number {
    return this.home?.W_ID ?? this.rng.int(1, this.scale.warehouses);
  }

  private district(): number {
    return this.rng.int(1, DISTRICTS_PER_WAREHOUSE);
  }

  /** A warehouse other than `w`, uniformly; `w` itself when it is the only one. */
  private otherWarehouse(w: number): number {
    if (this.scale.warehouses === 1) return w;
    const r = this.rng.int(1, this.scale.warehouses - 1);
    return r >= w ? r + 1 : r;
  }
}
