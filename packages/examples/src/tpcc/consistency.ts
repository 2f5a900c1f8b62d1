import type { JsonValue } from '@creek/app';
import type { RowsPage } from './app.js';
import {
  customerBalanceKey,
  customerKey,
  customerRow,
  districtKey,
  districtNextKey,
  districtRow,
  districtYtdKey,
  orderKey,
  parseKey,
  PREFIX,
  warehouseKey,
  warehouseRow,
  warehouseYtdKey,
  type CustomerBalance,
  type CustomerRow,
  type CustomerStatic,
  type DistrictNext,
  type DistrictRow,
  type DistrictStatic,
  type DistrictYtd,
  type HistoryRow,
  type NewOrderRow,
  type OrderLineRow,
  type OrderRow,
  type WarehouseRow,
  type WarehouseStatic,
  type WarehouseYtd,
} from './keys.js';
import { DISTRICTS_PER_WAREHOUSE, firstUndelivered, type Profile } from './scale.js';

/**
 * TPC-C's consistency conditions (§3.3.2) over a whole state: every `tpcc/` key and its value, as
 * a replica's `state()` map holds them, or as `readRows` collects them through `tpcc.rows`.
 *
 * Implemented: 1–10 and 12, which hold in every state a serial history of the five transactions
 * reaches from a consistent load, and 11 on request (`initialPopulation`): it compares
 * count(ORDER) − count(NEW-ORDER) with the load's delivered orders, which every Delivery changes,
 * so the spec checks it right after the population only. Condition 0 is this mapping's own: a
 * key the schema does not define, a row whose id columns disagree with its key, a row of a split
 * table (WAREHOUSE, DISTRICT, CUSTOMER; keys.ts) with a part missing, or a secondary index entry
 * that disagrees with the rows it indexes.
 *
 * The conditions read columns, as the spec's SQL does: the parts of a split row are joined into
 * the spec's row first (a row missing a part is reported and left out). Rows are grouped by the
 * ids in their columns, and condition 0 makes sure those are the ids in their keys. A report
 * names the keys holding the columns it compares (W_YTD is at `tpcc/w/{W}/ytd`, ...).
 */

export interface Violation {
  /** §3.3.2.n; 0 for the key mapping itself. */
  readonly condition: number;
  /** The rows involved (the district, the order, ...), so a report points at data. */
  readonly keys: string[];
  readonly message: string;
}

export interface CheckOptions {
  /** Check condition 11 against the population of this profile (only right after the load). */
  readonly initialPopulation?: Profile;
}

type Keyed<T> = { key: string; row: T };

/** A row of a split table, joined from its parts; `keys` are the parts' keys, by part. */
type Joined<T, P extends string> = { key: string; keys: Record<P, string>; row: T };

/** Per district: everything the conditions aggregate. */
interface DistrictAgg {
  district?: Joined<DistrictRow, 'static' | 'ytd' | 'next'>;
  /** Any part of the district is stored (if not all, condition 0 says which is missing). */
  stored: boolean;
  orders: Array<Keyed<OrderRow>>;
  newOrders: Array<Keyed<NewOrderRow>>;
  lineCount: number;
  historySum: number;
}

export function checkConsistency(
  state: Iterable<readonly [string, JsonValue]>,
  options: CheckOptions = {},
): Violation[] {
  const out: Violation[] = [];
  const report = (condition: number, keys: string[], message: string): void => {
    out.push({ condition, keys, message });
  };

  // The split tables' parts as stored, joined once every key is read.
  const warehouseStatic = new Map<number, Keyed<WarehouseStatic>>();
  const warehouseYtd = new Map<number, Keyed<WarehouseYtd>>();
  const districtStatic = new Map<string, Keyed<DistrictStatic>>();
  const districtYtd = new Map<string, Keyed<DistrictYtd>>();
  const districtNext = new Map<string, Keyed<DistrictNext>>();
  const customerStatic = new Map<string, Keyed<CustomerStatic>>();
  const customerBalance = new Map<string, Keyed<CustomerBalance>>();

  const warehouses = new Map<number, Joined<WarehouseRow, 'static' | 'ytd'>>();
  const districts = new Map<string, DistrictAgg>();
  const customers = new Map<string, Joined<CustomerRow, 'static' | 'bal'>>();
  const orders = new Map<string, Keyed<OrderRow>>();
  const newOrders = new Map<string, Keyed<NewOrderRow>>();
  const linesOf = new Map<string, Array<Keyed<OrderLineRow>>>();
  const historyByWarehouse = new Map<number, number>();
  const historyByCustomer = new Map<string, number>();
  const nameIndex: Array<{ key: string; w: number; d: number; last: string; first: string }> = [];
  const orderIndex: Array<{ key: string; w: number; d: number; c: number; o: number }> = [];
  const indexValues = new Map<string, JsonValue>();

  const agg = (w: number, d: number): DistrictAgg => {
    const k = `${w}/${d}`;
    let a = districts.get(k);
    if (a === undefined) {
      a = { stored: false, orders: [], newOrders: [], lineCount: 0, historySum: 0 };
      districts.set(k, a);
    }
    return a;
  };
  /** The row's id columns must be the key's ids: the conditions group by columns. */
  const sameIds = (key: string, row: Record<string, JsonValue>, ids: Record<string, number>) => {
    const wrong = Object.entries(ids).filter(([col, v]) => row[col] !== v);
    if (wrong.length > 0)
      report(
        0,
        [key],
        `columns ${wrong.map(([c]) => `${c}=${JSON.stringify(row[c])}`).join(', ')} disagree with the key`,
      );
  };

  for (const [key, value] of state) {
    if (!key.startsWith(PREFIX)) continue;
    const p = parseKey(key);
    if (p === null) {
      report(0, [key], 'a key the TPC-C schema does not define');
      continue;
    }
    if (p.table === 'C_LAST-INDEX') {
      nameIndex.push({ key, w: p.w, d: p.d, last: p.last, first: p.first });
      indexValues.set(key, value);
      if (value !== p.c) report(0, [key], `name index entry holds ${JSON.stringify(value)}`);
      continue;
    }
    if (p.table === 'O_C_ID-INDEX') {
      orderIndex.push({ key, ...p });
      if (value !== p.o) report(0, [key], `order index entry holds ${JSON.stringify(value)}`);
      continue;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      report(0, [key], `not a row: ${JSON.stringify(value)}`);
      continue;
    }
    switch (p.table) {
      case 'WAREHOUSE':
        sameIds(key, value, { W_ID: p.w });
        if (p.part === 'static') warehouseStatic.set(p.w, { key, row: value as WarehouseStatic });
        else warehouseYtd.set(p.w, { key, row: value as WarehouseYtd });
        break;
      case 'DISTRICT': {
        sameIds(key, value, { D_W_ID: p.w, D_ID: p.d });
        const k = `${p.w}/${p.d}`;
        agg(p.w, p.d).stored = true;
        if (p.part === 'static') districtStatic.set(k, { key, row: value as DistrictStatic });
        else if (p.part === 'ytd') districtYtd.set(k, { key, row: value as DistrictYtd });
        else districtNext.set(k, { key, row: value as DistrictNext });
        break;
      }
      case 'CUSTOMER': {
        sameIds(key, value, { C_W_ID: p.w, C_D_ID: p.d, C_ID: p.c });
        const k = `${p.w}/${p.d}/${p.c}`;
        if (p.part === 'static') customerStatic.set(k, { key, row: value as CustomerStatic });
        else customerBalance.set(k, { key, row: value as CustomerBalance });
        break;
      }
      case 'HISTORY': {
        sameIds(key, value, { H_C_W_ID: p.w, H_C_D_ID: p.d, H_C_ID: p.c });
        const h = value as HistoryRow;
        historyByWarehouse.set(h.H_W_ID, (historyByWarehouse.get(h.H_W_ID) ?? 0) + h.H_AMOUNT);
        agg(h.H_W_ID, h.H_D_ID).historySum += h.H_AMOUNT;
        const c = `${h.H_C_W_ID}/${h.H_C_D_ID}/${h.H_C_ID}`;
        historyByCustomer.set(c, (historyByCustomer.get(c) ?? 0) + h.H_AMOUNT);
        break;
      }
      case 'NEW-ORDER': {
        sameIds(key, value, { NO_W_ID: p.w, NO_D_ID: p.d, NO_O_ID: p.o });
        const no = { key, row: value as NewOrderRow };
        agg(p.w, p.d).newOrders.push(no);
        newOrders.set(`${p.w}/${p.d}/${p.o}`, no);
        break;
      }
      case 'ORDER': {
        sameIds(key, value, { O_W_ID: p.w, O_D_ID: p.d, O_ID: p.o });
        const o = { key, row: value as OrderRow };
        agg(p.w, p.d).orders.push(o);
        orders.set(`${p.w}/${p.d}/${p.o}`, o);
        break;
      }
      case 'ORDER-LINE': {
        sameIds(key, value, { OL_W_ID: p.w, OL_D_ID: p.d, OL_O_ID: p.o, OL_NUMBER: p.n });
        agg(p.w, p.d).lineCount++;
        const k = `${p.w}/${p.d}/${p.o}`;
        const list = linesOf.get(k) ?? [];
        list.push({ key, row: value as OrderLineRow });
        linesOf.set(k, list);
        break;
      }
      case 'ITEM':
        sameIds(key, value, { I_ID: p.i });
        break;
      case 'STOCK':
        sameIds(key, value, { S_W_ID: p.w, S_I_ID: p.i });
        break;
    }
  }

  // 0: every part of a split row is there; the whole rows, joined, are what the conditions read.
  const missing = (table: string, have: string, lacks: string): void =>
    report(0, [have, lacks], `a ${table} row without its part '${lacks}'`);
  for (const w of new Set([...warehouseStatic.keys(), ...warehouseYtd.keys()])) {
    const s = warehouseStatic.get(w);
    const y = warehouseYtd.get(w);
    if (s === undefined || y === undefined) {
      const have = (s ?? y)!.key;
      missing('WAREHOUSE', have, s === undefined ? warehouseKey(w) : warehouseYtdKey(w));
      continue;
    }
    warehouses.set(w, {
      key: s.key,
      keys: { static: s.key, ytd: y.key },
      row: warehouseRow(s.row, y.row),
    });
  }
  for (const [k, a] of districts) {
    if (!a.stored) continue;
    const [w, d] = k.split('/').map(Number) as [number, number];
    const s = districtStatic.get(k);
    const y = districtYtd.get(k);
    const n = districtNext.get(k);
    if (s === undefined || y === undefined || n === undefined) {
      const have = (s ?? y ?? n)!.key;
      if (s === undefined) missing('DISTRICT', have, districtKey(w, d));
      if (y === undefined) missing('DISTRICT', have, districtYtdKey(w, d));
      if (n === undefined) missing('DISTRICT', have, districtNextKey(w, d));
      continue;
    }
    a.district = {
      key: s.key,
      keys: { static: s.key, ytd: y.key, next: n.key },
      row: districtRow(s.row, y.row, n.row),
    };
  }
  for (const k of new Set([...customerStatic.keys(), ...customerBalance.keys()])) {
    const s = customerStatic.get(k);
    const b = customerBalance.get(k);
    if (s === undefined || b === undefined) {
      const [w, d, c] = k.split('/').map(Number) as [number, number, number];
      const have = (s ?? b)!.key;
      missing(
        'CUSTOMER',
        have,
        s === undefined ? customerKey(w, d, c) : customerBalanceKey(w, d, c),
      );
      continue;
    }
    customers.set(k, {
      key: s.key,
      keys: { static: s.key, bal: b.key },
      row: customerRow(s.row, b.row),
    });
  }

  // 1: W_YTD = sum(D_YTD), per warehouse.
  const ytdByWarehouse = new Map<number, { sum: number; keys: string[] }>();
  for (const a of districts.values()) {
    if (a.district === undefined) continue;
    const w = a.district.row.D_W_ID;
    const s = ytdByWarehouse.get(w) ?? { sum: 0, keys: [] };
    s.sum += a.district.row.D_YTD;
    s.keys.push(a.district.keys.ytd);
    ytdByWarehouse.set(w, s);
  }
  for (const [w, { keys, row }] of warehouses) {
    const s = ytdByWarehouse.get(w) ?? { sum: 0, keys: [] };
    if (row.W_YTD !== s.sum)
      report(1, [keys.ytd, ...s.keys], `W_YTD ${row.W_YTD} ≠ sum(D_YTD) ${s.sum}`);
  }

  for (const [k, a] of districts) {
    const [w, d] = k.split('/').map(Number) as [number, number];
    const dk = a.district?.key ?? districtKey(w, d);
    const nextKey = a.district?.keys.next ?? districtNextKey(w, d);
    const maxOrder = maxBy(a.orders, (o) => o.row.O_ID);
    const maxNew = maxBy(a.newOrders, (n) => n.row.NO_O_ID);
    const minNew = minBy(a.newOrders, (n) => n.row.NO_O_ID);
    if (a.district === undefined) {
      // A district with some of its parts is reported above, under condition 0 too.
      if (!a.stored) report(0, [dk], 'orders or history for a district that does not exist');
    } else {
      // 2: D_NEXT_O_ID − 1 = max(O_ID) = max(NO_O_ID); the last part only where NEW-ORDER rows exist.
      const next = a.district.row.D_NEXT_O_ID;
      const maxO = maxOrder?.row.O_ID ?? 0;
      if (next - 1 !== maxO)
        report(
          2,
          [nextKey, ...keysOf(maxOrder)],
          `D_NEXT_O_ID − 1 = ${next - 1} ≠ max(O_ID) ${maxO}`,
        );
      if (maxNew !== undefined && maxNew.row.NO_O_ID !== next - 1)
        report(
          2,
          [nextKey, maxNew.key],
          `D_NEXT_O_ID − 1 = ${next - 1} ≠ max(NO_O_ID) ${maxNew.row.NO_O_ID}`,
        );
      // 9: D_YTD = sum(H_AMOUNT) of the district's payments.
      if (a.district.row.D_YTD !== a.historySum)
        report(
          9,
          [a.district.keys.ytd],
          `D_YTD ${a.district.row.D_YTD} ≠ sum(H_AMOUNT) ${a.historySum}`,
        );
    }
    // 3: the NEW-ORDER rows of a district are contiguous.
    if (maxNew !== undefined && minNew !== undefined) {
      const span = maxNew.row.NO_O_ID - minNew.row.NO_O_ID + 1;
      if (span !== a.newOrders.length)
        report(
          3,
          [dk, minNew.key, maxNew.key],
          `max(NO_O_ID) − min(NO_O_ID) + 1 = ${span} ≠ ${a.newOrders.length} NEW-ORDER rows`,
        );
    }
    // 4: sum(O_OL_CNT) = number of ORDER-LINE rows, per district.
    const olCnt = a.orders.reduce((s, o) => s + o.row.O_OL_CNT, 0);
    if (olCnt !== a.lineCount)
      report(4, [dk], `sum(O_OL_CNT) ${olCnt} ≠ ${a.lineCount} ORDER-LINE rows`);
    // 11: only right after the population.
    const initial = options.initialPopulation;
    if (initial !== undefined) {
      const delivered = firstUndelivered(initial) - 1;
      if (a.orders.length - a.newOrders.length !== delivered)
        report(
          11,
          [dk],
          `count(ORDER) − count(NEW-ORDER) = ${a.orders.length - a.newOrders.length} ≠ ${delivered}`,
        );
    }
  }

  // Per order: 5, 6, 7, and the delivered amounts for 10 and 12.
  const deliveredByCustomer = new Map<string, number>();
  for (const [k, { key, row }] of orders) {
    const no = newOrders.get(k);
    // 5: O_CARRIER_ID is null iff the order has a NEW-ORDER row.
    if ((row.O_CARRIER_ID === null) !== (no !== undefined))
      report(
        5,
        no === undefined ? [key] : [key, no.key],
        row.O_CARRIER_ID === null
          ? 'O_CARRIER_ID is null but there is no NEW-ORDER row'
          : `O_CARRIER_ID ${row.O_CARRIER_ID} but a NEW-ORDER row exists`,
      );
    const lines = linesOf.get(k) ?? [];
    // 6: O_OL_CNT = the number of the order's ORDER-LINE rows.
    if (row.O_OL_CNT !== lines.length)
      report(
        6,
        [key, ...lines.map((l) => l.key)],
        `O_OL_CNT ${row.O_OL_CNT} ≠ ${lines.length} lines`,
      );
    let delivered = 0;
    for (const l of lines) {
      // 7: OL_DELIVERY_D is null iff the order's O_CARRIER_ID is null.
      if ((l.row.OL_DELIVERY_D === null) !== (row.O_CARRIER_ID === null))
        report(
          7,
          [l.key, key],
          `OL_DELIVERY_D ${l.row.OL_DELIVERY_D} with O_CARRIER_ID ${row.O_CARRIER_ID}`,
        );
      if (l.row.OL_DELIVERY_D !== null) delivered += l.row.OL_AMOUNT;
    }
    const c = `${row.O_W_ID}/${row.O_D_ID}/${row.O_C_ID}`;
    deliveredByCustomer.set(c, (deliveredByCustomer.get(c) ?? 0) + delivered);
  }
  for (const [k, no] of newOrders)
    if (!orders.has(k)) report(5, [no.key], 'a NEW-ORDER row without its ORDER row');
  for (const [k, lines] of linesOf)
    if (!orders.has(k))
      report(
        7,
        lines.map((l) => l.key),
        'ORDER-LINE rows without their ORDER row',
      );

  // 8: W_YTD = sum(H_AMOUNT) of the payments made at the warehouse.
  for (const [w, { keys, row }] of warehouses) {
    const sum = historyByWarehouse.get(w) ?? 0;
    if (row.W_YTD !== sum) report(8, [keys.ytd], `W_YTD ${row.W_YTD} ≠ sum(H_AMOUNT) ${sum}`);
  }
  // A warehouse with some of its parts is reported above.
  for (const w of historyByWarehouse.keys())
    if (!warehouseStatic.has(w) && !warehouseYtd.has(w))
      report(0, [warehouseKey(w)], 'payments at a missing warehouse');

  // 10 and 12, per customer.
  for (const [k, { keys, row }] of customers) {
    const key = keys.bal;
    const delivered = deliveredByCustomer.get(k) ?? 0;
    const paid = historyByCustomer.get(k) ?? 0;
    // 10: C_BALANCE = sum(OL_AMOUNT of delivered lines) − sum(H_AMOUNT).
    if (row.C_BALANCE !== delivered - paid)
      report(10, [key], `C_BALANCE ${row.C_BALANCE} ≠ ${delivered} delivered − ${paid} paid`);
    // 12: C_BALANCE + C_YTD_PAYMENT = sum(OL_AMOUNT of delivered lines).
    if (row.C_BALANCE + row.C_YTD_PAYMENT !== delivered)
      report(
        12,
        [key],
        `C_BALANCE + C_YTD_PAYMENT = ${row.C_BALANCE + row.C_YTD_PAYMENT} ≠ ${delivered} delivered`,
      );
  }

  // 0: the secondary indexes hold exactly the rows they index.
  const named = new Set<string>();
  for (const e of nameIndex) {
    const c = indexValues.get(e.key) as number;
    // C_LAST and C_FIRST are in the static part: a customer missing its balance part is reported
    // above, not here again.
    const cust = customerStatic.get(`${e.w}/${e.d}/${c}`);
    named.add(`${e.w}/${e.d}/${c}`);
    if (cust === undefined || cust.row.C_LAST !== e.last || cust.row.C_FIRST !== e.first)
      report(0, [e.key, customerKey(e.w, e.d, c)], 'name index entry without its customer');
  }
  for (const [k, { key }] of customerStatic)
    if (!named.has(k)) report(0, [key], 'a customer missing from the name index');
  const indexed = new Set<string>();
  for (const e of orderIndex) {
    const o = orders.get(`${e.w}/${e.d}/${e.o}`);
    indexed.add(`${e.w}/${e.d}/${e.o}`);
    if (o === undefined || o.row.O_C_ID !== e.c)
      report(0, [e.key, orderKey(e.w, e.d, e.o)], 'order index entry without its order');
  }
  for (const [k, { key }] of orders)
    if (!indexed.has(k)) report(0, [key], 'an order missing from the order index');

  return out;
}

/**
 * Reads every row under `prefix` through `tpcc.rows`, page by page. Pages are separate ops: the
 * result is one state only while no transaction runs, e.g. once a cluster has settled.
 */
export async function readRows(
  page: (args: { prefix: string; after: string | null; limit: number }) => PromiseLike<RowsPage>,
  prefix: string = PREFIX,
  limit = 500,
): Promise<Map<string, JsonValue>> {
  const rows = new Map<string, JsonValue>();
  let after: string | null = null;
  for (;;) {
    const p: RowsPage = await page({ prefix, after, limit });
    for (const [k, v] of p.rows) rows.set(k, v);
    if (p.next === null) return rows;
    after = p.next;
  }
}

/**
 * The rows of a database of `warehouses` warehouses, read in pieces that each scan a small part of
 * the key space: the items, each warehouse's stock, each district's rows, and the warehouse- and
 * district-level keys one by one (`get`, e.g. the built-in `kv.get`). `readRows` over all of
 * `tpcc/` is complete but scans the whole state for every page, so its cost grows with the
 * square of the state. This reads only where the schema puts rows: a stray key elsewhere is not
 * seen. The same caveat as `readRows`: one state only while no transaction runs.
 */
export async function readState(
  page: (args: { prefix: string; after: string | null; limit: number }) => PromiseLike<RowsPage>,
  get: (key: string) => PromiseLike<JsonValue | null | undefined>,
  warehouses: number,
): Promise<Map<string, JsonValue>> {
  const rows = new Map<string, JsonValue>();
  const add = (m: Map<string, JsonValue>): void => m.forEach((v, k) => rows.set(k, v));
  add(await readRows(page, `${PREFIX}i/`));
  for (let w = 1; w <= warehouses; w++) {
    const exact = [warehouseKey(w), warehouseYtdKey(w)];
    add(await readRows(page, `${warehouseKey(w)}/s/`));
    for (let d = 1; d <= DISTRICTS_PER_WAREHOUSE; d++) {
      exact.push(districtKey(w, d));
      add(await readRows(page, `${districtKey(w, d)}/`));
    }
    for (const key of exact) {
      const value = await get(key);
      if (value !== null && value !== undefined) rows.set(key, value);
    }
  }
  return rows;
}

function keysOf(x: { key: string } | undefined): string[] {
  return x === undefined ? [] : [x.key];
}

function maxBy<T>(xs: T[], f: (x: T) => number): T | undefined {
  let best: T | undefined;
  for (const x of xs) if (best === undefined || f(x) > f(best)) best = x;
  return best;
}

function minBy<T>(xs: T[], f: (x: T) => number): T | undefined {
  let best: T | undefined;
  for (const x of xs) if (best === undefined || f(x) < f(best)) best = x;
  return best;
}
