import { z } from 'zod';
import { defineApp, op, type JsonValue, type Tx } from '@creek/app';
import {
  customerBalanceKey,
  customerKey,
  customerOrderKey,
  customerOrdersPrefix,
  districtKey,
  districtNextKey,
  districtYtdKey,
  historyKey,
  itemKey,
  lastNamePrefix,
  newOrderKey,
  newOrderPrefix,
  orderKey,
  orderLineKey,
  PREFIX,
  stockKey,
  warehouseKey,
  warehouseYtdKey,
  type CustomerBalance,
  type CustomerStatic,
  type DistrictNext,
  type DistrictStatic,
  type DistrictYtd,
  type HistoryRow,
  type ItemRow,
  type NewOrderRow,
  type OrderLineRow,
  type OrderRow,
  type StockRow,
  type WarehouseStatic,
  type WarehouseYtd,
} from './keys.js';
import { LoadArgsSchema, populate } from './population.js';
import { ORIGINAL } from './random.js';
import { DISTRICTS_PER_WAREHOUSE } from './scale.js';
import { MAX_WORK, weigh } from './weight.js';

/**
 * TPC-C's five transactions (§2.4–§2.8) as ordinary Creek ops over the schema in keys.ts, plus the
 * population (`tpcc.load`) and a paged read of rows (`tpcc.rows`) for the consistency check.
 *
 * Every random input of a transaction (§2.x.1) is drawn by the client (inputs.ts) and travels in
 * the op's arguments, so `run` is a deterministic function of its snapshot and arguments, as Creek
 * requires: a replica that re-executes an op after a reorder gets the answer it would have got at
 * that place in a serial history. Dates are `tx.now()`, the op's timestamp, equal on every replica.
 *
 * Rollback (§2.4.2.3) is a thrown Error: Creek discards every write of an op that throws, so the
 * 1 % of New-Orders with an unused item id change nothing, D_NEXT_O_ID included.
 *
 * WAREHOUSE, DISTRICT and CUSTOMER are split by column (keys.ts), and each transaction reads and
 * writes only the parts holding the columns it uses: New-Order never reads a key Payment or
 * Delivery writes, so a replica that orders a Payment ahead of a New-Order it already executed
 * need not execute the New-Order again.
 */

const wId = z.number().int().positive();
const dId = z.number().int().min(1).max(DISTRICTS_PER_WAREHOUSE);
const id = z.number().int().positive();
/** C_LAST is made of upper-case syllables (§4.3.2.3): a key segment that needs no escaping. */
const cLast = z.string().regex(/^[A-Z]{1,16}$/, 'must be 1–16 upper-case letters');
/**
 * Rounds of extra computation the transaction does (weight.ts): 0, TPC-C's own cost, unless a
 * benchmark asks for the paper's. Bounded, so one op cannot take a replica's main thread for long.
 */
const work = z.number().int().min(0).max(MAX_WORK).default(0);

/** How Payment and Order-Status pick the customer: by C_ID, or by C_LAST (§2.5.1.2, §2.6.1.2). */
export const CustomerSelectorSchema = z.discriminatedUnion('by', [
  z.object({ by: z.literal('id'), C_ID: id }),
  z.object({ by: z.literal('name'), C_LAST: cLast }),
]);

export const NewOrderArgsSchema = z.object({
  W_ID: wId,
  D_ID: dId,
  C_ID: id,
  /** §2.4.1.3: 5 to 15 lines are drawn; the op takes 1 to 15. */
  lines: z
    .array(
      z.object({
        OL_I_ID: id,
        OL_SUPPLY_W_ID: wId,
        OL_QUANTITY: z.number().int().min(1).max(10),
      }),
    )
    .min(1)
    .max(15),
  work,
});

export const PaymentArgsSchema = z.object({
  W_ID: wId,
  D_ID: dId,
  /** The customer's warehouse and district: the home ones 85 % of the time (§2.5.1.2). */
  C_W_ID: wId,
  C_D_ID: dId,
  customer: CustomerSelectorSchema,
  /** §2.5.1.3: 1.00 to 5,000.00, in cents. */
  H_AMOUNT: z.number().int().min(100).max(500_000),
  work,
});

export const OrderStatusArgsSchema = z.object({
  W_ID: wId,
  D_ID: dId,
  customer: CustomerSelectorSchema,
  work,
});

export const DeliveryArgsSchema = z.object({
  W_ID: wId,
  O_CARRIER_ID: z.number().int().min(1).max(10),
  work,
});

export const StockLevelArgsSchema = z.object({
  W_ID: wId,
  D_ID: dId,
  /** §2.8.1.2 draws 10 to 20. */
  threshold: z.number().int().min(0).max(1_000),
  work,
});

export const RowsArgsSchema = z.object({
  prefix: z.string().startsWith(PREFIX, `must start with '${PREFIX}'`),
  /** Rows with keys after this one (the previous page's `next`); null for the first page. */
  after: z.string().nullable().default(null),
  limit: z.number().int().min(1).max(1_000).default(500),
});

export type NewOrderArgs = z.input<typeof NewOrderArgsSchema>;
export type PaymentArgs = z.input<typeof PaymentArgsSchema>;
export type OrderStatusArgs = z.input<typeof OrderStatusArgsSchema>;
export type DeliveryArgs = z.input<typeof DeliveryArgsSchema>;
export type StockLevelArgs = z.input<typeof StockLevelArgsSchema>;
export type CustomerSelector = z.input<typeof CustomerSelectorSchema>;

/** A page of rows from `tpcc.rows`: `next` is the `after` of the next page, null after the last. */
export type RowsPage = { rows: Array<[string, JsonValue]>; next: string | null };

/** The message New-Order's rollback fails with (§2.4.3.4: "Item number is not valid"). */
export const INVALID_ITEM = 'Item number is not valid';

/**
 * The row (or part of a row) at `key`, or a failed op: every transaction reads rows the population
 * created.
 */
function row<T>(tx: Tx, key: string, table: string): T {
  const v = tx.get(key);
  if (v === undefined || v === null || typeof v !== 'object' || Array.isArray(v))
    throw new Error(`no ${table} row at '${key}'`);
  return v as T;
}

/**
 * §2.5.2.2 and §2.6.2.2: by C_ID, the row itself; by C_LAST, every customer of the district with
 * that last name sorted by C_FIRST, and the one at position ⌈n / 2⌉. The name index is in C_FIRST
 * order already (keys.ts), so that is one scan. Returns the customer's static part and its balance
 * part, which both callers (Payment, Order-Status) need.
 */
function selectCustomer(
  tx: Tx,
  w: number,
  d: number,
  sel: z.output<typeof CustomerSelectorSchema>,
): { row: CustomerStatic; balanceKey: string; balance: CustomerBalance } {
  let c: number;
  if (sel.by === 'id') c = sel.C_ID;
  else {
    const matches = tx.scan(lastNamePrefix(w, d, sel.C_LAST));
    if (matches.length === 0)
      throw new Error(`no customer named ${sel.C_LAST} in warehouse ${w}, district ${d}`);
    c = matches[Math.ceil(matches.length / 2) - 1]![1] as number;
  }
  const found = row<CustomerStatic>(tx, customerKey(w, d, c), 'CUSTOMER');
  const balanceKey = customerBalanceKey(w, d, c);
  return { row: found, balanceKey, balance: row<CustomerBalance>(tx, balanceKey, 'CUSTOMER') };
}

export const tpccOps = {
  /** Writes one chunk of the initial population (population.ts). */
  'tpcc.load': op({
    args: LoadArgsSchema,
    run: (tx, a) => populate(tx, a),
  }),

  /**
   * New-Order (§2.4.2): takes the district's next order number, inserts ORDER, NEW-ORDER and an
   * ORDER-LINE per item, and takes the quantities out of STOCK. An unused item id fails the op:
   * nothing of it is applied (§2.4.2.3).
   */
  'tpcc.newOrder': op({
    args: NewOrderArgsSchema,
    run(tx, a) {
      const weight = weigh(a);
      // Static parts only (W_TAX, D_TAX, C_DISCOUNT, C_LAST, C_CREDIT), and D_NEXT_O_ID.
      const w = row<WarehouseStatic>(tx, warehouseKey(a.W_ID), 'WAREHOUSE');
      const d = row<DistrictStatic>(tx, districtKey(a.W_ID, a.D_ID), 'DISTRICT');
      const c = row<CustomerStatic>(tx, customerKey(a.W_ID, a.D_ID, a.C_ID), 'CUSTOMER');
      const nk = districtNextKey(a.W_ID, a.D_ID);
      const next = row<DistrictNext>(tx, nk, 'DISTRICT');
      const oId = next.D_NEXT_O_ID;
      tx.put(nk, { ...next, D_NEXT_O_ID: oId + 1 });
      const now = tx.now();
      const order: OrderRow = {
        O_ID: oId,
        O_D_ID: a.D_ID,
        O_W_ID: a.W_ID,
        O_C_ID: a.C_ID,
        O_ENTRY_D: now,
        O_CARRIER_ID: null,
        O_OL_CNT: a.lines.length,
        O_ALL_LOCAL: a.lines.every((l) => l.OL_SUPPLY_W_ID === a.W_ID) ? 1 : 0,
      };
      tx.put(orderKey(a.W_ID, a.D_ID, oId), order);
      const no: NewOrderRow = { NO_O_ID: oId, NO_D_ID: a.D_ID, NO_W_ID: a.W_ID };
      tx.put(newOrderKey(a.W_ID, a.D_ID, oId), no);
      tx.put(customerOrderKey(a.W_ID, a.D_ID, a.C_ID, oId), oId);

      let sum = 0;
      const lines: JsonValue[] = [];
      for (const [k, l] of a.lines.entries()) {
        const item = tx.get(itemKey(l.OL_I_ID)) as ItemRow | undefined;
        if (item === undefined)
          throw new Error(
            `${INVALID_ITEM}: ${l.OL_I_ID} (W_ID ${a.W_ID}, D_ID ${a.D_ID}, C_ID ${a.C_ID}, ` +
              `C_LAST ${c.C_LAST}, C_CREDIT ${c.C_CREDIT}, O_ID ${oId}); rolled back`,
          );
        const sk = stockKey(l.OL_SUPPLY_W_ID, l.OL_I_ID);
        const s = row<StockRow>(tx, sk, 'STOCK');
        // §2.4.2.2: restock by 91 when the order would leave fewer than 10.
        const quantity =
          s.S_QUANTITY >= l.OL_QUANTITY + 10
            ? s.S_QUANTITY - l.OL_QUANTITY
            : s.S_QUANTITY - l.OL_QUANTITY + 91;
        const remote = l.OL_SUPPLY_W_ID !== a.W_ID;
        tx.put(sk, {
          ...s,
          S_QUANTITY: quantity,
          S_YTD: s.S_YTD + l.OL_QUANTITY,
          S_ORDER_CNT: s.S_ORDER_CNT + 1,
          S_REMOTE_CNT: s.S_REMOTE_CNT + (remote ? 1 : 0),
        });
        const amount = l.OL_QUANTITY * item.I_PRICE;
        sum += amount;
        const line: OrderLineRow = {
          OL_O_ID: oId,
          OL_D_ID: a.D_ID,
          OL_W_ID: a.W_ID,
          OL_NUMBER: k + 1,
          OL_I_ID: l.OL_I_ID,
          OL_SUPPLY_W_ID: l.OL_SUPPLY_W_ID,
          OL_DELIVERY_D: null,
          OL_QUANTITY: l.OL_QUANTITY,
          OL_AMOUNT: amount,
          OL_DIST_INFO: s.S_DIST[a.D_ID - 1]!,
        };
        tx.put(orderLineKey(a.W_ID, a.D_ID, oId, k + 1), line);
        const brand = item.I_DATA.includes(ORIGINAL) && s.S_DATA.includes(ORIGINAL);
        lines.push({
          OL_SUPPLY_W_ID: l.OL_SUPPLY_W_ID,
          OL_I_ID: l.OL_I_ID,
          I_NAME: item.I_NAME,
          OL_QUANTITY: l.OL_QUANTITY,
          S_QUANTITY: quantity,
          brand_generic: brand ? 'B' : 'G',
          I_PRICE: item.I_PRICE,
          OL_AMOUNT: amount,
        });
      }
      // §2.4.2.2: sum(OL_AMOUNT) × (1 − C_DISCOUNT) × (1 + W_TAX + D_TAX), in cents.
      const total = Math.round(sum * (1 - c.C_DISCOUNT) * (1 + w.W_TAX + d.D_TAX));
      return {
        W_ID: a.W_ID,
        D_ID: a.D_ID,
        C_ID: a.C_ID,
        C_LAST: c.C_LAST,
        C_CREDIT: c.C_CREDIT,
        C_DISCOUNT: c.C_DISCOUNT,
        W_TAX: w.W_TAX,
        D_TAX: d.D_TAX,
        O_OL_CNT: a.lines.length,
        O_ID: oId,
        O_ENTRY_D: now,
        total_amount: total,
        lines,
        ...weight,
      };
    },
  }),

  /**
   * Payment (§2.5.2): adds H_AMOUNT to the warehouse's and the district's year-to-date, takes it
   * off the customer's balance, and records a HISTORY row. The customer may belong to another
   * warehouse (§2.5.1.2).
   */
  'tpcc.payment': op({
    args: PaymentArgsSchema,
    run(tx, a) {
      const weight = weigh(a);
      // W_NAME and D_NAME from the static parts; the year-to-date parts are Payment's own.
      const w = row<WarehouseStatic>(tx, warehouseKey(a.W_ID), 'WAREHOUSE');
      const wyk = warehouseYtdKey(a.W_ID);
      const wy = row<WarehouseYtd>(tx, wyk, 'WAREHOUSE');
      tx.put(wyk, { ...wy, W_YTD: wy.W_YTD + a.H_AMOUNT });
      const d = row<DistrictStatic>(tx, districtKey(a.W_ID, a.D_ID), 'DISTRICT');
      const dyk = districtYtdKey(a.W_ID, a.D_ID);
      const dy = row<DistrictYtd>(tx, dyk, 'DISTRICT');
      tx.put(dyk, { ...dy, D_YTD: dy.D_YTD + a.H_AMOUNT });
      const { row: c, balanceKey, balance } = selectCustomer(tx, a.C_W_ID, a.C_D_ID, a.customer);
      const paid: CustomerBalance = {
        ...balance,
        C_BALANCE: balance.C_BALANCE - a.H_AMOUNT,
        C_YTD_PAYMENT: balance.C_YTD_PAYMENT + a.H_AMOUNT,
        C_PAYMENT_CNT: balance.C_PAYMENT_CNT + 1,
      };
      if (c.C_CREDIT === 'BC') {
        // §2.5.2.2: the payment's ids and amount go in front of C_DATA, kept to 500 characters.
        const entry = `${c.C_ID} ${c.C_D_ID} ${c.C_W_ID} ${a.D_ID} ${a.W_ID} ${a.H_AMOUNT}|`;
        paid.C_DATA = (entry + balance.C_DATA).slice(0, 500);
      }
      tx.put(balanceKey, paid);
      const hk = historyKey(c.C_W_ID, c.C_D_ID, c.C_ID, paid.C_PAYMENT_CNT);
      if (tx.get(hk) !== undefined) throw new Error(`HISTORY row '${hk}' exists already`);
      const now = tx.now();
      const history: HistoryRow = {
        H_C_ID: c.C_ID,
        H_C_D_ID: c.C_D_ID,
        H_C_W_ID: c.C_W_ID,
        H_D_ID: a.D_ID,
        H_W_ID: a.W_ID,
        H_DATE: now,
        H_AMOUNT: a.H_AMOUNT,
        H_DATA: `${w.W_NAME}    ${d.D_NAME}`,
      };
      tx.put(hk, history);
      return {
        W_ID: a.W_ID,
        D_ID: a.D_ID,
        C_ID: c.C_ID,
        C_D_ID: c.C_D_ID,
        C_W_ID: c.C_W_ID,
        C_FIRST: c.C_FIRST,
        C_MIDDLE: c.C_MIDDLE,
        C_LAST: c.C_LAST,
        C_CREDIT: c.C_CREDIT,
        C_CREDIT_LIM: c.C_CREDIT_LIM,
        C_DISCOUNT: c.C_DISCOUNT,
        C_BALANCE: paid.C_BALANCE,
        H_AMOUNT: a.H_AMOUNT,
        H_DATE: now,
        ...weight,
      };
    },
  }),

  /**
   * Order-Status (§2.6.2): the customer's balance and their most recent order with its lines.
   * Read-only: invoked weak, a replica answers it from its own state without ordering it.
   */
  'tpcc.orderStatus': op({
    args: OrderStatusArgsSchema,
    readOnly: true,
    run(tx, a) {
      const weight = weigh(a);
      const { row: c, balance } = selectCustomer(tx, a.W_ID, a.D_ID, a.customer);
      const customer = {
        C_ID: c.C_ID,
        C_FIRST: c.C_FIRST,
        C_MIDDLE: c.C_MIDDLE,
        C_LAST: c.C_LAST,
        C_BALANCE: balance.C_BALANCE,
      };
      const orders = tx.scan(customerOrdersPrefix(a.W_ID, a.D_ID, c.C_ID));
      const latest = orders.at(-1);
      if (latest === undefined) return { customer, order: null, lines: [], ...weight };
      const o = row<OrderRow>(tx, orderKey(a.W_ID, a.D_ID, latest[1] as number), 'ORDER');
      const lines: JsonValue[] = [];
      for (let n = 1; n <= o.O_OL_CNT; n++) {
        const l = row<OrderLineRow>(tx, orderLineKey(a.W_ID, a.D_ID, o.O_ID, n), 'ORDER-LINE');
        lines.push({
          OL_SUPPLY_W_ID: l.OL_SUPPLY_W_ID,
          OL_I_ID: l.OL_I_ID,
          OL_QUANTITY: l.OL_QUANTITY,
          OL_AMOUNT: l.OL_AMOUNT,
          OL_DELIVERY_D: l.OL_DELIVERY_D,
        });
      }
      return {
        customer,
        order: { O_ID: o.O_ID, O_ENTRY_D: o.O_ENTRY_D, O_CARRIER_ID: o.O_CARRIER_ID },
        lines,
        ...weight,
      };
    },
  }),

  /**
   * Delivery (§2.7.4): in each of the warehouse's 10 districts, the oldest undelivered order (the
   * first NEW-ORDER row, keys.ts) is delivered: its NEW-ORDER row goes, the order gets its
   * carrier, its lines a delivery date, and the customer's balance the order's amount (in the
   * customer's `bal` part; the static part is not read). A district with no NEW-ORDER row is
   * skipped (§2.7.4.2). The spec lets Delivery run deferred, in the background; here it is one
   * op, which Creek may answer tentatively at once.
   */
  'tpcc.delivery': op({
    args: DeliveryArgsSchema,
    run(tx, a) {
      const weight = weigh(a);
      const now = tx.now();
      const delivered: Array<{ D_ID: number; O_ID: number }> = [];
      const skipped: number[] = [];
      for (let d = 1; d <= DISTRICTS_PER_WAREHOUSE; d++) {
        const oldest = tx.scan(newOrderPrefix(a.W_ID, d))[0];
        if (oldest === undefined) {
          skipped.push(d);
          continue;
        }
        const oId = (oldest[1] as NewOrderRow).NO_O_ID;
        tx.delete(oldest[0]);
        const ok = orderKey(a.W_ID, d, oId);
        const o = row<OrderRow>(tx, ok, 'ORDER');
        tx.put(ok, { ...o, O_CARRIER_ID: a.O_CARRIER_ID });
        let sum = 0;
        for (let n = 1; n <= o.O_OL_CNT; n++) {
          const lk = orderLineKey(a.W_ID, d, oId, n);
          const l = row<OrderLineRow>(tx, lk, 'ORDER-LINE');
          tx.put(lk, { ...l, OL_DELIVERY_D: now });
          sum += l.OL_AMOUNT;
        }
        const bk = customerBalanceKey(a.W_ID, d, o.O_C_ID);
        const b = row<CustomerBalance>(tx, bk, 'CUSTOMER');
        tx.put(bk, {
          ...b,
          C_BALANCE: b.C_BALANCE + sum,
          C_DELIVERY_CNT: b.C_DELIVERY_CNT + 1,
        });
        delivered.push({ D_ID: d, O_ID: oId });
      }
      return { W_ID: a.W_ID, O_CARRIER_ID: a.O_CARRIER_ID, delivered, skipped, ...weight };
    },
  }),

  /**
   * Stock-Level (§2.8.2): how many distinct items of the district's last 20 orders have fewer than
   * `threshold` in the warehouse's stock. Read-only. It reads the lines of orders D_NEXT_O_ID − 20
   * to D_NEXT_O_ID − 1 by key (each ORDER row says how many it has) rather than scanning
   * ORDER-LINE: O_IDs are dense (§3.3.2.2), so that selects the same rows.
   */
  'tpcc.stockLevel': op({
    args: StockLevelArgsSchema,
    readOnly: true,
    run(tx, a) {
      const weight = weigh(a);
      const d = row<DistrictNext>(tx, districtNextKey(a.W_ID, a.D_ID), 'DISTRICT');
      const items = new Set<number>();
      for (let o = Math.max(1, d.D_NEXT_O_ID - 20); o < d.D_NEXT_O_ID; o++) {
        const order = tx.get(orderKey(a.W_ID, a.D_ID, o)) as OrderRow | undefined;
        if (order === undefined) continue;
        for (let n = 1; n <= order.O_OL_CNT; n++) {
          const l = tx.get(orderLineKey(a.W_ID, a.D_ID, o, n)) as OrderLineRow | undefined;
          if (l !== undefined) items.add(l.OL_I_ID);
        }
      }
      let low = 0;
      for (const i of items) {
        const s = tx.get(stockKey(a.W_ID, i)) as StockRow | undefined;
        if (s !== undefined && s.S_QUANTITY < a.threshold) low++;
      }
      return { W_ID: a.W_ID, D_ID: a.D_ID, threshold: a.threshold, low_stock: low, ...weight };
    },
  }),

  /**
   * Rows under a prefix, in key order, a page at a time: how the consistency check reads a whole
   * state through ops. Pages are separate ops, so they show one state only while nothing else runs.
   */
  'tpcc.rows': op({
    args: RowsArgsSchema,
    readOnly: true,
    run(tx, a): RowsPage {
      const all = tx.scan(a.prefix);
      let start = 0;
      if (a.after !== null) {
        const after = a.after;
        start = all.findIndex(([k]) => k > after);
        if (start < 0) start = all.length;
      }
      const rows = all.slice(start, start + a.limit);
      const more = start + rows.length < all.length;
      return { rows, next: more ? rows.at(-1)![0] : null };
    },
  }),
};

const app = defineApp(tpccOps);

export default app;
export type TpccApp = typeof app;
