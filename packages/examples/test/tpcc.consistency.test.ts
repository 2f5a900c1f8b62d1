import type { JsonValue } from '@creek/app';
import { beforeAll, describe, expect, it } from 'vitest';
import app, { INVALID_ITEM } from '../src/tpcc/app.js';
import { checkConsistency, type Violation } from '../src/tpcc/consistency.js';
import { TpccInputs } from '../src/tpcc/inputs.js';
import {
  customerBalanceKey,
  customerKey,
  customerOrderKey,
  districtKey,
  districtNextKey,
  districtYtdKey,
  historyKey,
  lastNamePrefix,
  newOrderKey,
  newOrderPrefix,
  orderKey,
  orderLineKey,
  parseKey,
  readCustomer,
  readDistrict,
  readWarehouse,
  stockKey,
  warehouseKey,
  warehouseYtdKey,
  type CustomerBalance,
  type CustomerRow,
  type CustomerStatic,
  type DistrictNext,
  type DistrictRow,
  type DistrictYtd,
  type OrderRow,
  type WarehouseRow,
  type WarehouseYtd,
} from '../src/tpcc/keys.js';
import { loadPlan, MAX_ROWS_PER_LOAD } from '../src/tpcc/population.js';
import { rowCounts, scaleOf, TINY, type Scale } from '../src/tpcc/scale.js';
import { SerialDb, type Access } from './support/tpcc-serial.js';
import { forgettingTheDistrict } from './support/tpcc-planted.js';

/**
 * The TPC-C ops executed serially (as a replica executes the committed order), and the §3.3.2
 * consistency check: it passes on a loaded database and after a mixed workload, and it reports
 * each planted corruption under the right condition.
 */
const LOAD_SEED = 7;
const scale: Scale = scaleOf(TINY, 2);

function loaded(a = app): SerialDb {
  const db = new SerialDb(a);
  for (const chunk of loadPlan(scale, LOAD_SEED)) db.must('tpcc.load', chunk);
  return db;
}

/** Runs `n` transactions of the mix: the failures' messages, and how many were drawn to roll back. */
function workload(
  db: SerialDb,
  n: number,
  seed: number,
): { failures: string[]; rollbacks: number } {
  const inputs = new TpccInputs({ seed, scale, loadSeed: LOAD_SEED });
  const failures: string[] = [];
  let rollbacks = 0;
  for (let k = 0; k < n; k++) {
    const t = inputs.nextTransaction();
    if (t.op === 'tpcc.newOrder' && t.args.lines.some((l) => l.OL_I_ID > scale.items)) rollbacks++;
    const r = db.run(t.op, t.args);
    if (!r.ok) failures.push(r.error);
  }
  return { failures, rollbacks };
}

const conditions = (vs: Violation[]): number[] =>
  [...new Set(vs.map((v) => v.condition))].sort((a, b) => a - b);

function get<T>(state: Map<string, JsonValue>, key: string): T {
  const v = state.get(key);
  if (v === undefined) throw new Error(`no '${key}'`);
  return v as T;
}

/** Whole rows of the split tables, joined from their parts (keys.ts). */
function warehouse(state: Map<string, JsonValue>, w: number): WarehouseRow {
  const r = readWarehouse((k) => state.get(k), w);
  if (r === undefined) throw new Error(`no warehouse ${w}`);
  return r;
}
function district(state: Map<string, JsonValue>, w: number, d: number): DistrictRow {
  const r = readDistrict((k) => state.get(k), w, d);
  if (r === undefined) throw new Error(`no district ${w}/${d}`);
  return r;
}
function customer(state: Map<string, JsonValue>, w: number, d: number, c: number): CustomerRow {
  const r = readCustomer((k) => state.get(k), w, d, c);
  if (r === undefined) throw new Error(`no customer ${w}/${d}/${c}`);
  return r;
}

describe('the TPC-C population (§4.3.3.1)', () => {
  it('loads in chunks of at most 500 keys, the rows and keys rowCounts expects, consistent incl. condition 11', () => {
    const db = loaded();
    expect(Math.max(...db.writeCounts)).toBeLessThanOrEqual(MAX_ROWS_PER_LOAD);
    const byTable = new Map<string, number>();
    for (const k of db.data.keys()) {
      const p = parseKey(k);
      // A split row's static part counts as the row; its other parts as `TABLE/part`.
      const t =
        p === null
          ? 'unknown'
          : 'part' in p && p.part !== 'static'
            ? `${p.table}/${p.part}`
            : p.table;
      byTable.set(t, (byTable.get(t) ?? 0) + 1);
    }
    const expected = rowCounts(scale);
    for (const t of [
      'WAREHOUSE',
      'WAREHOUSE/ytd',
      'DISTRICT',
      'DISTRICT/ytd',
      'DISTRICT/next',
      'CUSTOMER',
      'CUSTOMER/bal',
      'HISTORY',
      'NEW-ORDER',
      'ORDER',
    ])
      expect(byTable.get(t), t).toBe(expected[t]);
    expect(byTable.get('ITEM')).toBe(scale.items);
    expect(byTable.get('STOCK')).toBe(scale.items * scale.warehouses);
    // 5 to 15 lines per order, about 10 on average.
    const lines = byTable.get('ORDER-LINE')!;
    expect(lines / expected.ORDER!).toBeGreaterThan(9);
    expect(lines / expected.ORDER!).toBeLessThan(11);
    expect(byTable.has('unknown')).toBe(false);
    expect(checkConsistency(db.data, { initialPopulation: TINY })).toEqual([]);
    // Loading a chunk twice is refused, so a repeated plan cannot reset a district.
    const again = db.run('tpcc.load', loadPlan(scale, LOAD_SEED)[0]);
    expect(again).toMatchObject({ ok: false, error: expect.stringMatching(/already loaded/) });
  });

  it('is a function of the seed alone, however it is chunked', () => {
    const a = loaded();
    const b = loaded();
    const strip = (m: Map<string, JsonValue>) => JSON.stringify([...m]);
    expect(strip(a.data)).toBe(strip(b.data));
    // The same district's orders, loaded as one chunk of 25 and one of 5 instead of 25 + 5.
    const c = new SerialDb(app);
    const base = { seed: LOAD_SEED, scale };
    c.must('tpcc.load', { part: 'orders', ...base, w: 1, d: 1, from: 1, to: 5 });
    c.must('tpcc.load', { part: 'orders', ...base, w: 1, d: 1, from: 6, to: 30 });
    // Equal but for the entry date, which is the loading op's time.
    const undated = (v: JsonValue | undefined) => ({ ...(v as OrderRow), O_ENTRY_D: 0 });
    for (const o of [1, 6, 30])
      expect(undated(c.data.get(orderKey(1, 1, o)))).toEqual(
        undated(a.data.get(orderKey(1, 1, o))),
      );
  });

  it('gives every name of the range to some customer, and each customer one order', () => {
    const db = loaded();
    const names = new Set<string>();
    for (const [k, v] of db.data) {
      const p = parseKey(k);
      if (p?.table === 'CUSTOMER' && p.part === 'static') names.add((v as CustomerStatic).C_LAST);
    }
    expect(names.size).toBe(10); // 30 customers, 3 per name
    const ordered = new Set<number>();
    for (let o = 1; o <= TINY.ordersPerDistrict; o++)
      ordered.add(get<OrderRow>(db.data, orderKey(1, 3, o)).O_C_ID);
    expect(ordered.size).toBe(TINY.customersPerDistrict);
  });
});

describe('the five transactions, serially', () => {
  let db: SerialDb;
  beforeAll(() => {
    db = loaded();
  });

  it('New-Order takes D_NEXT_O_ID, writes ORDER, NEW-ORDER, lines and stock (§2.4.2)', () => {
    const before = district(db.data, 1, 2);
    const stock = get<{ S_QUANTITY: number; S_REMOTE_CNT: number }>(db.data, stockKey(2, 17));
    const r = db.must('tpcc.newOrder', {
      W_ID: 1,
      D_ID: 2,
      C_ID: 5,
      lines: [
        { OL_I_ID: 17, OL_SUPPLY_W_ID: 2, OL_QUANTITY: 3 },
        { OL_I_ID: 18, OL_SUPPLY_W_ID: 1, OL_QUANTITY: 10 },
      ],
    }) as { O_ID: number; total_amount: number };
    expect(r.O_ID).toBe(before.D_NEXT_O_ID);
    expect(district(db.data, 1, 2).D_NEXT_O_ID).toBe(r.O_ID + 1);
    expect(get<OrderRow>(db.data, orderKey(1, 2, r.O_ID))).toMatchObject({
      O_C_ID: 5,
      O_OL_CNT: 2,
      O_ALL_LOCAL: 0,
      O_CARRIER_ID: null,
    });
    expect(db.data.has(newOrderKey(1, 2, r.O_ID))).toBe(true);
    expect(db.data.get(customerOrderKey(1, 2, 5, r.O_ID))).toBe(r.O_ID);
    expect(db.data.get(orderLineKey(1, 2, r.O_ID, 2))).toMatchObject({ OL_I_ID: 18 });
    const after = get<{ S_QUANTITY: number; S_REMOTE_CNT: number }>(db.data, stockKey(2, 17));
    const q = stock.S_QUANTITY;
    expect(after.S_QUANTITY).toBe(q >= 13 ? q - 3 : q - 3 + 91);
    expect(after.S_REMOTE_CNT).toBe(stock.S_REMOTE_CNT + 1);
    expect(r.total_amount).toBeGreaterThan(0);
    expect(checkConsistency(db.data)).toEqual([]);
  });

  it('New-Order with an unused item fails and applies nothing, D_NEXT_O_ID included (§2.4.2.3)', () => {
    const before = JSON.stringify([...db.data]);
    const r = db.run('tpcc.newOrder', {
      W_ID: 1,
      D_ID: 2,
      C_ID: 5,
      lines: [
        { OL_I_ID: 17, OL_SUPPLY_W_ID: 1, OL_QUANTITY: 3 },
        { OL_I_ID: scale.items + 1, OL_SUPPLY_W_ID: 1, OL_QUANTITY: 1 },
      ],
    });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(INVALID_ITEM);
    expect(JSON.stringify([...db.data])).toBe(before);
  });

  it('Payment by last name takes the middle customer by C_FIRST and records HISTORY (§2.5.2)', () => {
    const index = db.scan(lastNamePrefix(2, 4, 'BARBARBAR'));
    expect(index.length).toBeGreaterThanOrEqual(1);
    const middle = index[Math.ceil(index.length / 2) - 1]![1] as number;
    const c0 = customer(db.data, 2, 4, middle);
    const w0 = warehouse(db.data, 1).W_YTD;
    const r = db.must('tpcc.payment', {
      W_ID: 1,
      D_ID: 9,
      C_W_ID: 2,
      C_D_ID: 4,
      customer: { by: 'name', C_LAST: 'BARBARBAR' },
      H_AMOUNT: 12_345,
    }) as { C_ID: number; C_BALANCE: number };
    expect(r.C_ID).toBe(middle);
    expect(r.C_BALANCE).toBe(c0.C_BALANCE - 12_345);
    const c1 = customer(db.data, 2, 4, middle);
    expect(c1.C_PAYMENT_CNT).toBe(c0.C_PAYMENT_CNT + 1);
    expect(c1.C_YTD_PAYMENT).toBe(c0.C_YTD_PAYMENT + 12_345);
    expect(warehouse(db.data, 1).W_YTD).toBe(w0 + 12_345);
    expect(db.data.get(historyKey(2, 4, middle, c1.C_PAYMENT_CNT))).toMatchObject({
      H_W_ID: 1,
      H_D_ID: 9,
      H_AMOUNT: 12_345,
    });
    expect(checkConsistency(db.data)).toEqual([]);
    expect(
      db.run('tpcc.payment', {
        W_ID: 1,
        D_ID: 1,
        C_W_ID: 1,
        C_D_ID: 1,
        customer: { by: 'name', C_LAST: 'NOSUCHNAME' },
        H_AMOUNT: 100,
      }),
    ).toMatchObject({ ok: false, error: expect.stringMatching(/no customer named/) });
  });

  it("Order-Status returns the customer's latest order and its lines (§2.6.2)", () => {
    const placed = db.must('tpcc.newOrder', {
      W_ID: 2,
      D_ID: 7,
      C_ID: 11,
      lines: [{ OL_I_ID: 3, OL_SUPPLY_W_ID: 2, OL_QUANTITY: 4 }],
    }) as { O_ID: number };
    const r = db.must('tpcc.orderStatus', {
      W_ID: 2,
      D_ID: 7,
      customer: { by: 'id', C_ID: 11 },
    }) as { order: { O_ID: number; O_CARRIER_ID: null }; lines: Array<{ OL_I_ID: number }> };
    expect(r.order).toMatchObject({ O_ID: placed.O_ID, O_CARRIER_ID: null });
    expect(r.lines).toEqual([expect.objectContaining({ OL_I_ID: 3, OL_DELIVERY_D: null })]);
  });

  it('Delivery delivers the oldest new order of each district, and skips empty ones (§2.7.4)', () => {
    const oldest = db.scan(newOrderPrefix(1, 1))[0]![1] as { NO_O_ID: number };
    const order = get<OrderRow>(db.data, orderKey(1, 1, oldest.NO_O_ID));
    const c0 = customer(db.data, 1, 1, order.O_C_ID);
    const r = db.must('tpcc.delivery', { W_ID: 1, O_CARRIER_ID: 4 }) as {
      delivered: Array<{ D_ID: number; O_ID: number }>;
      skipped: number[];
    };
    expect(r.delivered).toContainEqual({ D_ID: 1, O_ID: oldest.NO_O_ID });
    expect(r.skipped).toEqual([]);
    expect(db.data.has(newOrderKey(1, 1, oldest.NO_O_ID))).toBe(false);
    expect(get<OrderRow>(db.data, orderKey(1, 1, oldest.NO_O_ID)).O_CARRIER_ID).toBe(4);
    const c1 = customer(db.data, 1, 1, order.O_C_ID);
    expect(c1.C_DELIVERY_CNT).toBe(c0.C_DELIVERY_CNT + 1);
    expect(c1.C_BALANCE).toBeGreaterThan(c0.C_BALANCE);
    // Deliver everything of warehouse 1: then every district is skipped, and all is consistent.
    for (let k = 0; k < 12; k++) db.must('tpcc.delivery', { W_ID: 1, O_CARRIER_ID: 1 });
    const idle = db.must('tpcc.delivery', { W_ID: 1, O_CARRIER_ID: 1 }) as { skipped: number[] };
    expect(idle.skipped).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(checkConsistency(db.data)).toEqual([]);
  });

  it('Stock-Level counts the distinct low-stock items of the last 20 orders (§2.8.2)', () => {
    const d = district(db.data, 2, 3);
    const items = new Set<number>();
    for (const [k, v] of db.data) {
      const p = parseKey(k);
      if (p?.table !== 'ORDER-LINE' || p.w !== 2 || p.d !== 3) continue;
      if (p.o >= d.D_NEXT_O_ID - 20 && p.o < d.D_NEXT_O_ID)
        items.add((v as { OL_I_ID: number }).OL_I_ID);
    }
    for (const threshold of [10, 15, 20, 60]) {
      const low = [...items].filter(
        (i) => get<{ S_QUANTITY: number }>(db.data, stockKey(2, i)).S_QUANTITY < threshold,
      ).length;
      expect(db.must('tpcc.stockLevel', { W_ID: 2, D_ID: 3, threshold })).toMatchObject({
        low_stock: low,
      });
    }
  });

  it('rejects arguments outside the schema before running', () => {
    expect(() => db.run('tpcc.newOrder', { W_ID: 1, D_ID: 11, C_ID: 1, lines: [] })).toThrow();
    expect(() =>
      db.run('tpcc.payment', {
        W_ID: 1,
        D_ID: 1,
        C_W_ID: 1,
        C_D_ID: 1,
        customer: { by: 'name', C_LAST: 'bar/../x' },
        H_AMOUNT: 100,
      }),
    ).toThrow(/C_LAST/);
    expect(() => db.run('tpcc.rows', { prefix: 'bank/', after: null, limit: 10 })).toThrow();
  });
});

/**
 * The keys whose change invalidates an execution of `reader` when `writer` is ordered before it:
 * what `writer` wrote that `reader` read, or that falls under a prefix `reader` scanned.
 */
function conflicts(reader: Access, writer: Access): string[] {
  return [...writer.writes].filter(
    (k) => reader.reads.has(k) || [...reader.scans].some((p) => k.startsWith(p)),
  );
}

describe('the vertical partitioning of WAREHOUSE, DISTRICT and CUSTOMER (keys.ts)', () => {
  it('New-Order reads no key Payment or Delivery writes, and Payment reads none New-Order writes', () => {
    const db = loaded();
    const access = (op: string, args: unknown): Access => {
      db.must(op, args);
      return db.lastAccess;
    };
    // A bad-credit customer, so that Payment rewrites C_DATA as well.
    const c = Array.from({ length: TINY.customersPerDistrict }, (_, k) =>
      get<CustomerStatic>(db.data, customerKey(1, 3, k + 1)),
    ).find((x) => x.C_CREDIT === 'BC');
    expect(c).toBeDefined();
    const C_ID = c!.C_ID;
    const newOrderArgs = {
      W_ID: 1,
      D_ID: 3,
      C_ID,
      lines: [
        { OL_I_ID: 17, OL_SUPPLY_W_ID: 1, OL_QUANTITY: 3 },
        { OL_I_ID: 18, OL_SUPPLY_W_ID: 2, OL_QUANTITY: 4 },
      ],
    };
    const payment = (customer: unknown) => ({
      W_ID: 1,
      D_ID: 3,
      C_W_ID: 1,
      C_D_ID: 3,
      customer,
      H_AMOUNT: 2_500,
    });
    const newOrder = access('tpcc.newOrder', newOrderArgs);
    const byId = access('tpcc.payment', payment({ by: 'id', C_ID }));
    const byName = access('tpcc.payment', payment({ by: 'name', C_LAST: c!.C_LAST }));
    const newOrder2 = access('tpcc.newOrder', newOrderArgs);
    const oldest = db.scan(newOrderPrefix(1, 3))[0]![1] as { NO_O_ID: number };
    const deliveredTo = get<OrderRow>(db.data, orderKey(1, 3, oldest.NO_O_ID)).O_C_ID;
    const delivery = access('tpcc.delivery', { W_ID: 1, O_CARRIER_ID: 2 });
    const stockLevel = access('tpcc.stockLevel', { W_ID: 1, D_ID: 3, threshold: 15 });
    const orderStatus = access('tpcc.orderStatus', {
      W_ID: 1,
      D_ID: 3,
      customer: { by: 'id', C_ID },
    });

    // The same rows: New-Order reads the static parts, Payment writes the other parts.
    for (const k of [warehouseKey(1), districtKey(1, 3), customerKey(1, 3, C_ID)]) {
      expect(newOrder.reads).toContain(k);
      expect(byId.reads).toContain(k);
    }
    expect([...byId.writes].sort()).toEqual(
      [
        warehouseYtdKey(1),
        districtYtdKey(1, 3),
        customerBalanceKey(1, 3, C_ID),
        historyKey(1, 3, C_ID, 2),
      ].sort(),
    );
    expect(byName.writes).toContain(customerBalanceKey(1, 3, C_ID));
    expect(byName.scans).toContain(lastNamePrefix(1, 3, c!.C_LAST));
    // A Payment ordered before an executed New-Order leaves what it read alone, and the other way.
    for (const pay of [byId, byName]) {
      expect(conflicts(newOrder, pay)).toEqual([]);
      expect(conflicts(newOrder2, pay)).toEqual([]);
      expect(conflicts(pay, newOrder)).toEqual([]);
      expect(conflicts(pay, newOrder2)).toEqual([]);
    }
    // Delivery writes a customer's `bal`, which New-Order does not read either.
    expect(delivery.writes).toContain(customerBalanceKey(1, 3, deliveredTo));
    expect(conflicts(newOrder, delivery)).toEqual([]);
    expect(conflicts(stockLevel, byId)).toEqual([]);
    // Real conflicts are still seen: two Payments of a district, New-Orders of a district,
    // Stock-Level and New-Order, Order-Status and Payment (the balance).
    expect(conflicts(byName, byId)).toEqual(
      expect.arrayContaining([warehouseYtdKey(1), districtYtdKey(1, 3)]),
    );
    expect(conflicts(newOrder2, newOrder)).toContain(districtNextKey(1, 3));
    expect(conflicts(stockLevel, newOrder2)).toContain(districtNextKey(1, 3));
    expect(conflicts(orderStatus, byName)).toEqual([customerBalanceKey(1, 3, C_ID)]);
  });
});

describe('the consistency check (§3.3.2)', () => {
  let db: SerialDb;
  let run: { failures: string[]; rollbacks: number };
  beforeAll(() => {
    db = loaded();
    run = workload(db, 1_000, 99);
  });

  it('finds nothing after 1,000 transactions of the mix, whose only failures are rollbacks', () => {
    expect(run.rollbacks).toBeGreaterThan(0);
    expect(run.failures.length).toBe(run.rollbacks);
    for (const f of run.failures) expect(f).toMatch(INVALID_ITEM);
    expect(checkConsistency(db.data)).toEqual([]);
    // Condition 11 holds only for the population: deliveries have changed it since.
    expect(conditions(checkConsistency(db.data, { initialPopulation: TINY }))).toEqual([11]);
  });

  /** A district of warehouse 1 with at least three NEW-ORDER rows. */
  function busyDistrict(state: Map<string, JsonValue>): { d: number; ids: number[] } {
    for (let d = 1; d <= 10; d++) {
      const ids = [...state.keys()]
        .filter((k) => k.startsWith(newOrderPrefix(1, d)))
        .map((k) => Number(k.slice(newOrderPrefix(1, d).length)));
      if (ids.length >= 3) return { d, ids };
    }
    throw new Error('no district with three new orders');
  }

  const planted: Array<[string, number[], (s: Map<string, JsonValue>) => string]> = [
    [
      'a D_YTD changed',
      [1, 9],
      (s) => {
        const k = districtYtdKey(1, 4);
        const d = get<DistrictYtd>(s, k);
        s.set(k, { ...d, D_YTD: d.D_YTD + 1 });
        return k;
      },
    ],
    [
      'a W_YTD changed',
      [1, 8],
      (s) => {
        const k = warehouseYtdKey(2);
        s.set(k, { ...get<WarehouseYtd>(s, k), W_YTD: 1 });
        return k;
      },
    ],
    [
      'a NEW-ORDER row in the middle deleted',
      [3, 5],
      (s) => {
        const { d, ids } = busyDistrict(s);
        const k = newOrderKey(1, d, ids[1]!);
        s.delete(k);
        return k.replace('/no/', '/o/');
      },
    ],
    [
      'the newest NEW-ORDER row deleted',
      [2, 5],
      (s) => {
        const { d, ids } = busyDistrict(s);
        s.delete(newOrderKey(1, d, ids.at(-1)!));
        return districtNextKey(1, d);
      },
    ],
    [
      'an ORDER-LINE removed',
      [4, 6],
      (s) => {
        const k = orderLineKey(2, 6, 10, 3);
        expect(s.has(k)).toBe(true);
        s.delete(k);
        return orderKey(2, 6, 10);
      },
    ],
    [
      'D_NEXT_O_ID bumped',
      [2],
      (s) => {
        const k = districtNextKey(2, 2);
        const d = get<DistrictNext>(s, k);
        s.set(k, { ...d, D_NEXT_O_ID: d.D_NEXT_O_ID + 1 });
        return k;
      },
    ],
    [
      'a C_BALANCE changed',
      [10, 12],
      (s) => {
        const k = customerBalanceKey(1, 5, 17);
        const c = get<CustomerBalance>(s, k);
        s.set(k, { ...c, C_BALANCE: c.C_BALANCE - 100 });
        return k;
      },
    ],
    [
      'an undelivered order given a carrier',
      [5, 7],
      (s) => {
        const { d, ids } = busyDistrict(s);
        const k = orderKey(1, d, ids[0]!);
        s.set(k, { ...get<OrderRow>(s, k), O_CARRIER_ID: 3 });
        return k;
      },
    ],
    [
      'a HISTORY row lost',
      [8, 9, 10],
      (s) => {
        const k = historyKey(2, 8, 20, 1);
        expect(s.has(k)).toBe(true);
        s.delete(k);
        return customerBalanceKey(2, 8, 20);
      },
    ],
    [
      'a name index entry lost',
      [0],
      (s) => {
        const c = get<CustomerStatic>(s, customerKey(1, 1, 1));
        const k = [...s.keys()].find(
          (x) => x.startsWith(lastNamePrefix(1, 1, c.C_LAST)) && s.get(x) === 1,
        )!;
        s.delete(k);
        return customerKey(1, 1, 1);
      },
    ],
    [
      "a customer's balance part lost",
      [0],
      (s) => {
        s.delete(customerBalanceKey(2, 3, 4));
        return customerKey(2, 3, 4);
      },
    ],
    [
      "a warehouse's static part lost",
      [0],
      (s) => {
        s.delete(warehouseKey(1));
        return warehouseYtdKey(1);
      },
    ],
    [
      "a district's next order id lost",
      // Condition 1 too: the district, incomplete, is left out of sum(D_YTD).
      [0, 1],
      (s) => {
        s.delete(districtNextKey(1, 6));
        return districtNextKey(1, 6);
      },
    ],
    [
      'a part whose ids disagree with its key',
      [0],
      (s) => {
        const k = customerBalanceKey(1, 2, 3);
        s.set(k, { ...get<CustomerBalance>(s, k), C_ID: 4 });
        return k;
      },
    ],
    [
      'a part of a district that does not exist',
      [0],
      (s) => {
        const k = districtYtdKey(2, 11);
        s.set(k, { D_ID: 11, D_W_ID: 2, D_YTD: 0 });
        return k;
      },
    ],
  ];

  it.each(planted)('reports %s under conditions %j', (_, expected, plant) => {
    const state = db.copy();
    expect(checkConsistency(state)).toEqual([]);
    const key = plant(state);
    const found = checkConsistency(state);
    expect(conditions(found)).toEqual(expected);
    for (const v of found) expect(v.keys.length).toBeGreaterThan(0);
    expect(found.some((v) => v.keys.includes(key))).toBe(true);
  });

  it('catches a New-Order that forgets to increment D_NEXT_O_ID (condition 2 and more)', () => {
    const buggy = forgettingTheDistrict('tpcc.newOrder');
    const bad = loaded(buggy);
    workload(bad, 300, 99);
    const found = conditions(checkConsistency(bad.data));
    expect(found).toContain(2);
  });

  it('catches a Payment that forgets the district (conditions 1 and 9)', () => {
    const buggy = forgettingTheDistrict('tpcc.payment');
    const bad = loaded(buggy);
    workload(bad, 100, 5);
    expect(conditions(checkConsistency(bad.data))).toEqual([1, 9]);
  });
});
