/**
 * The TPC-C schema (§1.3) mapped onto Creek's key space. Each row is one key built from the table's
 * primary key, holding a JSON object with the spec's columns:
 *
 * | table      | key                                        | primary key (§1.3)                    |
 * | ---------- | ------------------------------------------ | ------------------------------------- |
 * | WAREHOUSE  | `tpcc/w/{W}`                               | W_ID                                  |
 * | DISTRICT   | `tpcc/w/{W}/d/{D}`                         | (D_W_ID, D_ID)                        |
 * | CUSTOMER   | `tpcc/w/{W}/d/{D}/c/{C}`                   | (C_W_ID, C_D_ID, C_ID)                |
 * | HISTORY    | `tpcc/w/{W}/d/{D}/c/{C}/h/{n}`             | none in the spec; see `historyKey`    |
 * | NEW-ORDER  | `tpcc/w/{W}/d/{D}/no/{O:8}`                | (NO_W_ID, NO_D_ID, NO_O_ID)           |
 * | ORDER      | `tpcc/w/{W}/d/{D}/o/{O:8}`                 | (O_W_ID, O_D_ID, O_ID)                |
 * | ORDER-LINE | `tpcc/w/{W}/d/{D}/ol/{O:8}/{OL:2}`         | (OL_W_ID, OL_D_ID, OL_O_ID, OL_NUMBER)|
 * | ITEM       | `tpcc/i/{I}`                               | I_ID                                  |
 * | STOCK      | `tpcc/w/{W}/s/{I}`                         | (S_W_ID, S_I_ID)                      |
 *
 * plus two secondary indexes, each an ordinary key whose value is the id it points to:
 *
 * - customers by last name, `tpcc/w/{W}/d/{D}/c-last/{C_LAST}/{C_FIRST}/{C:5}` → C_ID: Payment and
 *   Order-Status select by C_LAST and take the middle customer ordered by C_FIRST (§2.5.2.2,
 *   §2.6.2.2), which is one `tx.scan` of `c-last/{C_LAST}/`, already in C_FIRST order;
 * - orders by customer, `tpcc/w/{W}/d/{D}/o-cust/{C}/{O:8}` → O_ID: Order-Status wants the
 *   customer's order with the largest O_ID (§2.6.2.2): the last row of one scan.
 *
 * `{O:8}` is O_ID zero-padded to 8 digits (and OL_NUMBER to 2, C_ID in the name index to 5) because
 * `tx.scan(prefix)` returns rows in key order, which is then numeric order: Delivery takes the
 * oldest NEW-ORDER of a district as the first row of `no/` (§2.7.4.2). Ids that are never scanned
 * in order are not padded. Every scanned prefix ends with "/", so `c/1/` never matches `c/12`.
 *
 * Money columns (W_YTD, D_YTD, C_BALANCE, C_YTD_PAYMENT, C_CREDIT_LIM, H_AMOUNT, I_PRICE,
 * OL_AMOUNT) are integer cents, so sums are exact. Dates are milliseconds since the epoch, from
 * `tx.now()`, or null. Tax and discount rates are plain decimals (0.1234). C_DATA is loaded at
 * 30–50 characters instead of the spec's 300–500 (it only grows, by Payment, for bad-credit
 * customers, up to the spec's 500): it is filler that no transaction reads, and it would be most of
 * the state's size. Every other column is kept at the spec's sizes.
 */

export const PREFIX = 'tpcc/';

const pad = (n: number, width: number): string => String(n).padStart(width, '0');
const o8 = (o: number): string => pad(o, 8);

export const warehouseKey = (w: number): string => `tpcc/w/${w}`;
export const districtKey = (w: number, d: number): string => `tpcc/w/${w}/d/${d}`;
export const customerKey = (w: number, d: number, c: number): string => `tpcc/w/${w}/d/${d}/c/${c}`;
/**
 * HISTORY has no primary key in the spec (§1.3: "rows are not unique"). A row is keyed under the
 * customer it is about, by that customer's C_PAYMENT_CNT after the payment: every Payment
 * increments it, so the key is new, and the same on every replica. The load's row is number 1.
 */
export const historyKey = (w: number, d: number, c: number, n: number): string =>
  `tpcc/w/${w}/d/${d}/c/${c}/h/${n}`;
export const newOrderPrefix = (w: number, d: number): string => `tpcc/w/${w}/d/${d}/no/`;
export const newOrderKey = (w: number, d: number, o: number): string =>
  newOrderPrefix(w, d) + o8(o);
export const orderKey = (w: number, d: number, o: number): string =>
  `tpcc/w/${w}/d/${d}/o/${o8(o)}`;
export const orderLinePrefix = (w: number, d: number, o: number): string =>
  `tpcc/w/${w}/d/${d}/ol/${o8(o)}/`;
export const orderLineKey = (w: number, d: number, o: number, n: number): string =>
  orderLinePrefix(w, d, o) + pad(n, 2);
export const itemKey = (i: number): string => `tpcc/i/${i}`;
export const stockKey = (w: number, i: number): string => `tpcc/w/${w}/s/${i}`;
export const lastNamePrefix = (w: number, d: number, last: string): string =>
  `tpcc/w/${w}/d/${d}/c-last/${last}/`;
export const lastNameKey = (w: number, d: number, last: string, first: string, c: number): string =>
  `${lastNamePrefix(w, d, last)}${first}/${pad(c, 5)}`;
export const customerOrdersPrefix = (w: number, d: number, c: number): string =>
  `tpcc/w/${w}/d/${d}/o-cust/${c}/`;
export const customerOrderKey = (w: number, d: number, c: number, o: number): string =>
  customerOrdersPrefix(w, d, c) + o8(o);

/** §1.3.1. W_YTD in cents. */
export type WarehouseRow = {
  W_ID: number;
  W_NAME: string;
  W_STREET_1: string;
  W_STREET_2: string;
  W_CITY: string;
  W_STATE: string;
  W_ZIP: string;
  W_TAX: number;
  W_YTD: number;
};

/** §1.3.2. D_YTD in cents. */
export type DistrictRow = {
  D_ID: number;
  D_W_ID: number;
  D_NAME: string;
  D_STREET_1: string;
  D_STREET_2: string;
  D_CITY: string;
  D_STATE: string;
  D_ZIP: string;
  D_TAX: number;
  D_YTD: number;
  D_NEXT_O_ID: number;
};

/** §1.3.3. C_CREDIT_LIM, C_BALANCE, C_YTD_PAYMENT in cents; C_DATA shortened (see above). */
export type CustomerRow = {
  C_ID: number;
  C_D_ID: number;
  C_W_ID: number;
  C_FIRST: string;
  C_MIDDLE: string;
  C_LAST: string;
  C_STREET_1: string;
  C_STREET_2: string;
  C_CITY: string;
  C_STATE: string;
  C_ZIP: string;
  C_PHONE: string;
  C_SINCE: number;
  C_CREDIT: 'GC' | 'BC';
  C_CREDIT_LIM: number;
  C_DISCOUNT: number;
  C_BALANCE: number;
  C_YTD_PAYMENT: number;
  C_PAYMENT_CNT: number;
  C_DELIVERY_CNT: number;
  C_DATA: string;
};

/** §1.3.4. H_AMOUNT in cents. */
export type HistoryRow = {
  H_C_ID: number;
  H_C_D_ID: number;
  H_C_W_ID: number;
  H_D_ID: number;
  H_W_ID: number;
  H_DATE: number;
  H_AMOUNT: number;
  H_DATA: string;
};

/** §1.3.5. */
export type NewOrderRow = { NO_O_ID: number; NO_D_ID: number; NO_W_ID: number };

/** §1.3.6. O_CARRIER_ID is null until Delivery; O_ALL_LOCAL is 1 or 0. */
export type OrderRow = {
  O_ID: number;
  O_D_ID: number;
  O_W_ID: number;
  O_C_ID: number;
  O_ENTRY_D: number;
  O_CARRIER_ID: number | null;
  O_OL_CNT: number;
  O_ALL_LOCAL: number;
};

/** §1.3.7. OL_AMOUNT in cents; OL_DELIVERY_D null until Delivery. */
export type OrderLineRow = {
  OL_O_ID: number;
  OL_D_ID: number;
  OL_W_ID: number;
  OL_NUMBER: number;
  OL_I_ID: number;
  OL_SUPPLY_W_ID: number;
  OL_DELIVERY_D: number | null;
  OL_QUANTITY: number;
  OL_AMOUNT: number;
  OL_DIST_INFO: string;
};

/** §1.3.8. I_PRICE in cents. */
export type ItemRow = {
  I_ID: number;
  I_IM_ID: number;
  I_NAME: string;
  I_PRICE: number;
  I_DATA: string;
};

/** §1.3.9. S_DIST_01..S_DIST_10 as one array, indexed by D_ID − 1. */
export type StockRow = {
  S_I_ID: number;
  S_W_ID: number;
  S_QUANTITY: number;
  S_DIST: string[];
  S_YTD: number;
  S_ORDER_CNT: number;
  S_REMOTE_CNT: number;
  S_DATA: string;
};

/** What a key is, with the ids it carries: how the consistency check reads a whole state. */
export type ParsedKey =
  | { table: 'WAREHOUSE'; w: number }
  | { table: 'DISTRICT'; w: number; d: number }
  | { table: 'CUSTOMER'; w: number; d: number; c: number }
  | { table: 'HISTORY'; w: number; d: number; c: number; n: number }
  | { table: 'NEW-ORDER'; w: number; d: number; o: number }
  | { table: 'ORDER'; w: number; d: number; o: number }
  | { table: 'ORDER-LINE'; w: number; d: number; o: number; n: number }
  | { table: 'ITEM'; i: number }
  | { table: 'STOCK'; w: number; i: number }
  | { table: 'C_LAST-INDEX'; w: number; d: number; last: string; first: string; c: number }
  | { table: 'O_C_ID-INDEX'; w: number; d: number; c: number; o: number };

const N = '([1-9][0-9]*)';
const P8 = '([0-9]{8})';
const PATTERNS: Array<[RegExp, (m: number[], s: string[]) => ParsedKey]> = [
  [new RegExp(`^tpcc/w/${N}$`), ([w]) => ({ table: 'WAREHOUSE', w: w! })],
  [new RegExp(`^tpcc/w/${N}/d/${N}$`), ([w, d]) => ({ table: 'DISTRICT', w: w!, d: d! })],
  [
    new RegExp(`^tpcc/w/${N}/d/${N}/c/${N}$`),
    ([w, d, c]) => ({ table: 'CUSTOMER', w: w!, d: d!, c: c! }),
  ],
  [
    new RegExp(`^tpcc/w/${N}/d/${N}/c/${N}/h/${N}$`),
    ([w, d, c, n]) => ({ table: 'HISTORY', w: w!, d: d!, c: c!, n: n! }),
  ],
  [
    new RegExp(`^tpcc/w/${N}/d/${N}/no/${P8}$`),
    ([w, d, o]) => ({ table: 'NEW-ORDER', w: w!, d: d!, o: o! }),
  ],
  [
    new RegExp(`^tpcc/w/${N}/d/${N}/o/${P8}$`),
    ([w, d, o]) => ({ table: 'ORDER', w: w!, d: d!, o: o! }),
  ],
  [
    new RegExp(`^tpcc/w/${N}/d/${N}/ol/${P8}/([0-9]{2})$`),
    ([w, d, o, n]) => ({ table: 'ORDER-LINE', w: w!, d: d!, o: o!, n: n! }),
  ],
  [new RegExp(`^tpcc/i/${N}$`), ([i]) => ({ table: 'ITEM', i: i! })],
  [new RegExp(`^tpcc/w/${N}/s/${N}$`), ([w, i]) => ({ table: 'STOCK', w: w!, i: i! })],
  [
    new RegExp(`^tpcc/w/${N}/d/${N}/c-last/([A-Z]+)/([A-Za-z0-9]+)/([0-9]{5})$`),
    ([w, d], [, , last, first, c]) => ({
      table: 'C_LAST-INDEX',
      w: w!,
      d: d!,
      last: last!,
      first: first!,
      c: Number(c),
    }),
  ],
  [
    new RegExp(`^tpcc/w/${N}/d/${N}/o-cust/${N}/${P8}$`),
    ([w, d, c, o]) => ({ table: 'O_C_ID-INDEX', w: w!, d: d!, c: c!, o: o! }),
  ],
];

/** The table and ids of a TPC-C key, or null for a key this schema does not define. */
export function parseKey(key: string): ParsedKey | null {
  for (const [re, build] of PATTERNS) {
    const m = re.exec(key);
    if (m === null) continue;
    const groups = m.slice(1);
    return build(
      groups.map((g) => (/^[0-9]+$/.test(g) ? Number(g) : Number.NaN)),
      groups,
    );
  }
  return null;
}
