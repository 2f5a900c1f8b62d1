import { z } from 'zod';
import type { JsonValue, Tx } from '@creek/app';
import {
  customerKey,
  customerOrderKey,
  customerParts,
  districtParts,
  historyKey,
  itemKey,
  lastNameKey,
  newOrderKey,
  orderKey,
  orderLineKey,
  stockKey,
  warehouseKey,
  warehouseParts,
  type CustomerRow,
  type DistrictRow,
  type HistoryRow,
  type ItemRow,
  type NewOrderRow,
  type OrderLineRow,
  type OrderRow,
  type StockRow,
  type WarehouseRow,
} from './keys.js';
import { lastName, Rng } from './random.js';
import {
  DISTRICTS_PER_WAREHOUSE,
  firstUndelivered,
  INITIAL_PAYMENT_CENTS,
  initialDistrictYtd,
  initialWarehouseYtd,
  lastNameCount,
  loadC,
  nurandA,
  ScaleSchema,
  type Scale,
} from './scale.js';

/**
 * The initial population (§4.3.3.1), written by `tpcc.load` one bounded chunk at a time: an op is
 * one atomic write set that every replica executes and keeps versions of until it is final, so a
 * whole warehouse (hundreds of thousands of rows) in one op would stall every replica. A chunk
 * writes at most `MAX_ROWS_PER_LOAD` keys (a WAREHOUSE, DISTRICT or CUSTOMER row is several keys,
 * keys.ts); `loadPlan` lists the chunks of a whole database.
 *
 * The chunk's rows are drawn from the seed in its arguments, not from `tx.random()`: a row's
 * stream is derived from (seed, table, ids), so the data is the same however the load is chunked,
 * and the O_C_ID permutation of a district (§4.3.3.1: O_C_ID "selected sequentially from a random
 * permutation of [1 .. 3,000]") is the same in every chunk of that district's orders.
 */
export const MAX_ROWS_PER_LOAD = 500;

/**
 * Ids per chunk: ITEM and STOCK are one key per id; a customer is 4 keys (CUSTOMER's two parts, its
 * HISTORY row, its last-name index entry); an order is up to 18 (ORDER, its index entry, up to 15
 * ORDER-LINEs, a NEW-ORDER). The warehouse chunk is 32: the WAREHOUSE's 2 parts and 3 for each of
 * its 10 DISTRICTs.
 */
export const LOAD_CHUNK = { items: 500, stock: 500, customers: 125, orders: 25 } as const;

/** Stream tags for `Rng.derive`: one per kind of row. */
const STREAM = {
  warehouse: 1,
  district: 2,
  customer: 3,
  item: 4,
  stock: 5,
  order: 6,
  permutation: 7,
} as const;

const seed = z.number().int().nonnegative().max(0xffffffff);
const wId = z.number().int().positive();
const dId = z.number().int().min(1).max(DISTRICTS_PER_WAREHOUSE);
const id = z.number().int().positive();

/** A range of one district's customers or orders. */
const districtRange = { seed, scale: ScaleSchema, w: wId, d: dId, from: id, to: id };

export const LoadArgsSchema = z
  .discriminatedUnion('part', [
    z.object({ part: z.literal('warehouse'), seed, scale: ScaleSchema, w: wId }),
    z.object({ part: z.literal('items'), seed, scale: ScaleSchema, from: id, to: id }),
    z.object({ part: z.literal('stock'), seed, scale: ScaleSchema, w: wId, from: id, to: id }),
    z.object({ part: z.literal('customers'), ...districtRange }),
    z.object({ part: z.literal('orders'), ...districtRange }),
  ])
  .superRefine((a, ctx) => {
    const s = a.scale;
    if ('w' in a && a.w > s.warehouses)
      ctx.addIssue({ code: 'custom', path: ['w'], message: `beyond ${s.warehouses} warehouses` });
    if (a.part === 'warehouse') return;
    const max = {
      items: s.items,
      stock: s.items,
      customers: s.customersPerDistrict,
      orders: s.ordersPerDistrict,
    }[a.part];
    if (a.to < a.from || a.to > max)
      ctx.addIssue({ code: 'custom', path: ['to'], message: `must be in [from, ${max}]` });
    if (a.to - a.from + 1 > LOAD_CHUNK[a.part])
      ctx.addIssue({
        code: 'custom',
        path: ['to'],
        message: `a ${a.part} chunk holds at most ${LOAD_CHUNK[a.part]} ids`,
      });
  });

export type LoadArgs = z.output<typeof LoadArgsSchema>;

/** Every chunk of a database of this scale, in an order in which each can be loaded. */
export function loadPlan(scale: Scale, loadSeed: number): LoadArgs[] {
  const plan: LoadArgs[] = [];
  const chunks = (n: number, size: number): Array<[number, number]> =>
    Array.from({ length: Math.ceil(n / size) }, (_, k) => [
      k * size + 1,
      Math.min(n, (k + 1) * size),
    ]);
  const base = { seed: loadSeed, scale };
  for (const [from, to] of chunks(scale.items, LOAD_CHUNK.items))
    plan.push({ part: 'items', ...base, from, to });
  for (let w = 1; w <= scale.warehouses; w++) {
    plan.push({ part: 'warehouse', ...base, w });
    for (const [from, to] of chunks(scale.items, LOAD_CHUNK.stock))
      plan.push({ part: 'stock', ...base, w, from, to });
    for (let d = 1; d <= DISTRICTS_PER_WAREHOUSE; d++) {
      for (const [from, to] of chunks(scale.customersPerDistrict, LOAD_CHUNK.customers))
        plan.push({ part: 'customers', ...base, w, d, from, to });
      for (const [from, to] of chunks(scale.ordersPerDistrict, LOAD_CHUNK.orders))
        plan.push({ part: 'orders', ...base, w, d, from, to });
    }
  }
  return plan;
}

/**
 * Writes one chunk; returns how many keys it wrote (`rows`: a row of a split table counts once per
 * part). Refuses a chunk whose first row exists, so that
 * a repeated plan cannot reset a district's counters under the orders placed since.
 */
export function populate(tx: Tx, a: LoadArgs): { rows: number } {
  let rows = 0;
  const put = (key: string, value: JsonValue): void => {
    tx.put(key, value);
    rows++;
  };
  const putAll = (parts: Array<[string, JsonValue]>): void => {
    for (const [key, value] of parts) put(key, value);
  };
  const first = firstKey(a);
  if (tx.get(first) !== undefined) throw new Error(`already loaded: '${first}' exists`);
  const now = tx.now();
  const s = a.scale;
  switch (a.part) {
    case 'warehouse': {
      const r = Rng.derive(a.seed, STREAM.warehouse, a.w);
      const row: WarehouseRow = {
        W_ID: a.w,
        W_NAME: r.aString(6, 10),
        ...address(r, 'W'),
        W_TAX: r.int(0, 2_000) / 10_000,
        W_YTD: initialWarehouseYtd(s),
      } as WarehouseRow;
      putAll(warehouseParts(row));
      for (let d = 1; d <= DISTRICTS_PER_WAREHOUSE; d++) {
        const rd = Rng.derive(a.seed, STREAM.district, a.w, d);
        const district: DistrictRow = {
          D_ID: d,
          D_W_ID: a.w,
          D_NAME: rd.aString(6, 10),
          ...address(rd, 'D'),
          D_TAX: rd.int(0, 2_000) / 10_000,
          D_YTD: initialDistrictYtd(s),
          D_NEXT_O_ID: s.ordersPerDistrict + 1,
        } as DistrictRow;
        putAll(districtParts(district));
      }
      break;
    }
    case 'items':
      for (let i = a.from; i <= a.to; i++) {
        const r = Rng.derive(a.seed, STREAM.item, i);
        const item: ItemRow = {
          I_ID: i,
          I_IM_ID: r.int(1, 10_000),
          I_NAME: r.aString(14, 24),
          I_PRICE: r.int(100, 10_000),
          I_DATA: r.data(26, 50),
        };
        put(itemKey(i), item);
      }
      break;
    case 'stock':
      for (let i = a.from; i <= a.to; i++) {
        const r = Rng.derive(a.seed, STREAM.stock, a.w, i);
        const stock: StockRow = {
          S_I_ID: i,
          S_W_ID: a.w,
          S_QUANTITY: r.int(10, 100),
          S_DIST: Array.from({ length: DISTRICTS_PER_WAREHOUSE }, () => r.aString(24, 24)),
          S_YTD: 0,
          S_ORDER_CNT: 0,
          S_REMOTE_CNT: 0,
          S_DATA: r.data(26, 50),
        };
        put(stockKey(a.w, i), stock);
      }
      break;
    case 'customers': {
      const names = lastNameCount(s);
      const aLast = nurandA(s).cLast;
      const cLoad = loadC(a.seed, s);
      for (let c = a.from; c <= a.to; c++) {
        const r = Rng.derive(a.seed, STREAM.customer, a.w, a.d, c);
        // §4.3.2.3: the first customers take every name once, in order; the rest are NURand.
        const last = lastName(c <= names ? c - 1 : r.nurand(aLast, 0, names - 1, cLoad));
        const customer: CustomerRow = {
          C_ID: c,
          C_D_ID: a.d,
          C_W_ID: a.w,
          C_FIRST: r.aString(8, 16),
          C_MIDDLE: 'OE',
          C_LAST: last,
          ...address(r, 'C'),
          C_PHONE: r.nString(16, 16),
          C_SINCE: now,
          C_CREDIT: r.int(1, 100) <= 10 ? 'BC' : 'GC',
          C_CREDIT_LIM: 5_000_000,
          C_DISCOUNT: r.int(0, 5_000) / 10_000,
          C_BALANCE: -INITIAL_PAYMENT_CENTS,
          C_YTD_PAYMENT: INITIAL_PAYMENT_CENTS,
          C_PAYMENT_CNT: 1,
          C_DELIVERY_CNT: 0,
          C_DATA: r.aString(30, 50),
        } as CustomerRow;
        putAll(customerParts(customer));
        put(lastNameKey(a.w, a.d, last, customer.C_FIRST, c), c);
        const history: HistoryRow = {
          H_C_ID: c,
          H_C_D_ID: a.d,
          H_C_W_ID: a.w,
          H_D_ID: a.d,
          H_W_ID: a.w,
          H_DATE: now,
          H_AMOUNT: INITIAL_PAYMENT_CENTS,
          H_DATA: r.aString(12, 24),
        };
        put(historyKey(a.w, a.d, c, 1), history);
      }
      break;
    }
    case 'orders': {
      const customers = Rng.derive(a.seed, STREAM.permutation, a.w, a.d).permutation(
        s.customersPerDistrict,
      );
      const undelivered = firstUndelivered(s);
      for (let o = a.from; o <= a.to; o++) {
        const r = Rng.derive(a.seed, STREAM.order, a.w, a.d, o);
        const delivered = o < undelivered;
        const c = customers[(o - 1) % customers.length]!;
        const order: OrderRow = {
          O_ID: o,
          O_D_ID: a.d,
          O_W_ID: a.w,
          O_C_ID: c,
          O_ENTRY_D: now,
          O_CARRIER_ID: delivered ? r.int(1, 10) : null,
          O_OL_CNT: r.int(5, 15),
          O_ALL_LOCAL: 1,
        };
        put(orderKey(a.w, a.d, o), order);
        put(customerOrderKey(a.w, a.d, c, o), o);
        for (let n = 1; n <= order.O_OL_CNT; n++) {
          const line: OrderLineRow = {
            OL_O_ID: o,
            OL_D_ID: a.d,
            OL_W_ID: a.w,
            OL_NUMBER: n,
            OL_I_ID: r.int(1, s.items),
            OL_SUPPLY_W_ID: a.w,
            OL_DELIVERY_D: delivered ? now : null,
            OL_QUANTITY: 5,
            OL_AMOUNT: delivered ? 0 : r.int(1, 999_999),
            OL_DIST_INFO: r.aString(24, 24),
          };
          put(orderLineKey(a.w, a.d, o, n), line);
        }
        if (!delivered) {
          const no: NewOrderRow = { NO_O_ID: o, NO_D_ID: a.d, NO_W_ID: a.w };
          put(newOrderKey(a.w, a.d, o), no);
        }
      }
      break;
    }
  }
  if (rows > MAX_ROWS_PER_LOAD) throw new Error(`a load chunk wrote ${rows} keys`);
  return { rows };
}

function firstKey(a: LoadArgs): string {
  switch (a.part) {
    case 'warehouse':
      return warehouseKey(a.w);
    case 'items':
      return itemKey(a.from);
    case 'stock':
      return stockKey(a.w, a.from);
    case 'customers':
      return customerKey(a.w, a.d, a.from);
    case 'orders':
      return orderKey(a.w, a.d, a.from);
  }
}

/** Street, city, state and zip (§4.3.3.1; zip per §4.3.2.7: 4 random digits then "11111"). */
function address(r: Rng, t: 'W' | 'D' | 'C'): Record<string, string> {
  return {
    [`${t}_STREET_1`]: r.aString(10, 20),
    [`${t}_STREET_2`]: r.aString(10, 20),
    [`${t}_CITY`]: r.aString(10, 20),
    [`${t}_STATE`]: r.letters(2),
    [`${t}_ZIP`]: `${r.nString(4, 4)}11111`,
  };
}
