import type { JsonValue } from '@creek/app';

/**
 * The TPC-C schema (§1.3) mapped onto Creek's key space. A row is a key built from the table's
 * primary key, holding a JSON object with the spec's columns; WAREHOUSE, DISTRICT and CUSTOMER are
 * split vertically, each row into a key for the columns only the load writes and a key per group
 * of columns the transactions update (below):
 *
 * | table      | key                                        | primary key (§1.3)                    |
 * | ---------- | ------------------------------------------ | ------------------------------------- |
 * | WAREHOUSE  | `tpcc/w/{W}`, `…/ytd`                      | W_ID                                  |
 * | DISTRICT   | `tpcc/w/{W}/d/{D}`, `…/ytd`, `…/next`      | (D_W_ID, D_ID)                        |
 * | CUSTOMER   | `tpcc/w/{W}/d/{D}/c/{C}`, `…/bal`          | (C_W_ID, C_D_ID, C_ID)                |
 * | HISTORY    | `tpcc/w/{W}/d/{D}/c/{C}/h/{n}`             | none in the spec; see `historyKey`    |
 * | NEW-ORDER  | `tpcc/w/{W}/d/{D}/no/{O:8}`                | (NO_W_ID, NO_D_ID, NO_O_ID)           |
 * | ORDER      | `tpcc/w/{W}/d/{D}/o/{O:8}`                 | (O_W_ID, O_D_ID, O_ID)                |
 * | ORDER-LINE | `tpcc/w/{W}/d/{D}/ol/{O:8}/{OL:2}`         | (OL_W_ID, OL_D_ID, OL_O_ID, OL_NUMBER)|
 * | ITEM       | `tpcc/i/{I}`                               | I_ID                                  |
 * | STOCK      | `tpcc/w/{W}/s/{I}`                         | (S_W_ID, S_I_ID)                      |
 *
 * The split rows. TPC-C allows vertical partitioning of tables (§1.6); here it is invisible to
 * clients, whose ops take and return what they did on whole rows. Each part carries the row's
 * primary key columns, and only the columns listed:
 *
 * | key                          | columns                                        | written by        |
 * | ---------------------------- | ---------------------------------------------- | ----------------- |
 * | `tpcc/w/{W}`                 | W_NAME, address, W_TAX                         | the load only     |
 * | `tpcc/w/{W}/ytd`             | W_YTD                                          | Payment           |
 * | `tpcc/w/{W}/d/{D}`           | D_NAME, address, D_TAX                         | the load only     |
 * | `tpcc/w/{W}/d/{D}/ytd`       | D_YTD                                          | Payment           |
 * | `tpcc/w/{W}/d/{D}/next`      | D_NEXT_O_ID                                    | New-Order         |
 * | `tpcc/w/{W}/d/{D}/c/{C}`     | names, address, C_PHONE, C_SINCE, C_CREDIT,    | the load only     |
 * |                              | C_CREDIT_LIM, C_DISCOUNT                       |                   |
 * | `tpcc/w/{W}/d/{D}/c/{C}/bal` | C_BALANCE, C_YTD_PAYMENT, C_PAYMENT_CNT,       | Payment, Delivery |
 * |                              | C_DELIVERY_CNT, C_DATA                         |                   |
 *
 * Why: a Creek replica executes ops speculatively and validates an execution by comparing the
 * values it read with the values now at its place in the order; a changed value means the op is
 * re-executed (and its tentative answer may change). Conflicts are per key. With one key per row,
 * a New-Order read the WAREHOUSE row for W_TAX, the DISTRICT row for D_TAX and the CUSTOMER row for
 * C_DISCOUNT, C_LAST and C_CREDIT, and every Payment rewrote those very keys (W_YTD, D_YTD,
 * C_BALANCE): at one warehouse nearly every transaction conflicted with every Payment. Split, a
 * New-Order reads only columns nobody updates plus D_NEXT_O_ID, which it alone writes; Payment
 * writes only the `ytd` keys and the customer's `bal`; Delivery writes `bal`; Order-Status reads
 * the customer's static row and `bal`; Stock-Level reads `next`. C_DATA lives in `bal`: Payment is
 * its only writer after the load and writes C_BALANCE in the same op, and every reader of `bal`
 * wants the balance anyway, so a key of its own would save no conflict and cost a key per
 * customer. `warehouseRow`, `districtRow` and `customerRow` join the parts into the spec's rows
 * (the consistency check and tests read those); `warehouseParts` and the like split a row.
 *
 * Two secondary indexes, each an ordinary key whose value is the id it points to:
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
 * in order are not padded. Every scanned prefix ends with "/", so `c/1/` never matches `c/12`; the
 * transactions scan only `c-last/{C_LAST}/`, `no/` and `o-cust/{C}/`, which none of the parts'
 * keys (`ytd`, `next`, `bal`) falls under.
 *
 * Money columns (W_YTD, D_YTD, C_BALANCE, C_YTD_PAYMENT, C_CREDIT_LIM, H_AMOUNT, I_PRICE,
 * OL_AMOUNT) are integer cents, so sums are exact. Dates are milliseconds since the epoch, from
 * `tx.now()`, or null. Tax and discount rates are plain decimals (0.1234). C_DATA is loaded at
 * 30–50 characters instead of the spec's 300–500 (it only grows, by Payment, for bad-credit
 * customers, up to the spec's 500): it is filler that no transaction returns, and it would be
 * most of the state's size. Every other column is kept at the spec's sizes.
 */

export const PREFIX = 'tpcc/';

const pad = (n: number, width: number): string => String(n).padStart(width, '0');
const o8 = (o: number): string => pad(o, 8);

/** WAREHOUSE's columns that only the load writes (`WarehouseStatic`). */
export const warehouseKey = (w: number): string => `tpcc/w/${w}`;
/** W_YTD (`WarehouseYtd`): Payment's. */
export const warehouseYtdKey = (w: number): string => `${warehouseKey(w)}/ytd`;
/** DISTRICT's columns that only the load writes (`DistrictStatic`). */
export const districtKey = (w: number, d: number): string => `tpcc/w/${w}/d/${d}`;
/** D_YTD (`DistrictYtd`): Payment's. */
export const districtYtdKey = (w: number, d: number): string => `${districtKey(w, d)}/ytd`;
/** D_NEXT_O_ID (`DistrictNext`): New-Order's. */
export const districtNextKey = (w: number, d: number): string => `${districtKey(w, d)}/next`;
/** CUSTOMER's columns that only the load writes (`CustomerStatic`). */
export const customerKey = (w: number, d: number, c: number): string => `tpcc/w/${w}/d/${d}/c/${c}`;
/** The balance, payment and delivery columns and C_DATA (`CustomerBalance`): Payment's and Delivery's. */
export const customerBalanceKey = (w: number, d: number, c: number): string =>
  `${customerKey(w, d, c)}/bal`;
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

/** WAREHOUSE at `warehouseKey`: every column but W_YTD. */
export type WarehouseStatic = Omit<WarehouseRow, 'W_YTD'>;
/** WAREHOUSE at `warehouseYtdKey`. */
export type WarehouseYtd = Pick<WarehouseRow, 'W_ID' | 'W_YTD'>;

/** DISTRICT at `districtKey`: every column but D_YTD and D_NEXT_O_ID. */
export type DistrictStatic = Omit<DistrictRow, 'D_YTD' | 'D_NEXT_O_ID'>;
/** DISTRICT at `districtYtdKey`. */
export type DistrictYtd = Pick<DistrictRow, 'D_ID' | 'D_W_ID' | 'D_YTD'>;
/** DISTRICT at `districtNextKey`. */
export type DistrictNext = Pick<DistrictRow, 'D_ID' | 'D_W_ID' | 'D_NEXT_O_ID'>;

/** The CUSTOMER columns Payment or Delivery update; C_DATA with them (see above). */
type CustomerBalanceColumn =
  'C_BALANCE' | 'C_YTD_PAYMENT' | 'C_PAYMENT_CNT' | 'C_DELIVERY_CNT' | 'C_DATA';

/** CUSTOMER at `customerKey`: the columns only the load writes. */
export type CustomerStatic = Omit<CustomerRow, CustomerBalanceColumn>;
/** CUSTOMER at `customerBalanceKey`. */
export type CustomerBalance = Pick<
  CustomerRow,
  'C_ID' | 'C_D_ID' | 'C_W_ID' | CustomerBalanceColumn
>;

/** The whole WAREHOUSE row from its parts (the ids are the static part's). */
export function warehouseRow(s: WarehouseStatic, y: WarehouseYtd): WarehouseRow {
  return { ...s, W_YTD: y.W_YTD };
}

/** The whole DISTRICT row from its parts (the ids are the static part's). */
export function districtRow(s: DistrictStatic, y: DistrictYtd, n: DistrictNext): DistrictRow {
  return { ...s, D_YTD: y.D_YTD, D_NEXT_O_ID: n.D_NEXT_O_ID };
}

/** The whole CUSTOMER row from its parts (the ids are the static part's). */
export function customerRow(s: CustomerStatic, b: CustomerBalance): CustomerRow {
  return {
    ...s,
    C_BALANCE: b.C_BALANCE,
    C_YTD_PAYMENT: b.C_YTD_PAYMENT,
    C_PAYMENT_CNT: b.C_PAYMENT_CNT,
    C_DELIVERY_CNT: b.C_DELIVERY_CNT,
    C_DATA: b.C_DATA,
  };
}

/** A WAREHOUSE row as the keys and values it is stored as. */
export function warehouseParts(r: WarehouseRow): Array<[string, WarehouseStatic | WarehouseYtd]> {
  const { W_YTD: ytd, ...rest } = r;
  return [
    [warehouseKey(r.W_ID), rest],
    [warehouseYtdKey(r.W_ID), { W_ID: r.W_ID, W_YTD: ytd }],
  ];
}

/** A DISTRICT row as the keys and values it is stored as. */
export function districtParts(
  r: DistrictRow,
): Array<[string, DistrictStatic | DistrictYtd | DistrictNext]> {
  const { D_YTD: ytd, D_NEXT_O_ID: next, ...rest } = r;
  const ids = { D_ID: r.D_ID, D_W_ID: r.D_W_ID };
  return [
    [districtKey(r.D_W_ID, r.D_ID), rest],
    [districtYtdKey(r.D_W_ID, r.D_ID), { ...ids, D_YTD: ytd }],
    [districtNextKey(r.D_W_ID, r.D_ID), { ...ids, D_NEXT_O_ID: next }],
  ];
}

/** A CUSTOMER row as the keys and values it is stored as. */
export function customerParts(r: CustomerRow): Array<[string, CustomerStatic | CustomerBalance]> {
  const { C_BALANCE, C_YTD_PAYMENT, C_PAYMENT_CNT, C_DELIVERY_CNT, C_DATA, ...rest } = r;
  const balance: CustomerBalance = {
    C_ID: r.C_ID,
    C_D_ID: r.C_D_ID,
    C_W_ID: r.C_W_ID,
    C_BALANCE,
    C_YTD_PAYMENT,
    C_PAYMENT_CNT,
    C_DELIVERY_CNT,
    C_DATA,
  };
  return [
    [customerKey(r.C_W_ID, r.C_D_ID, r.C_ID), rest],
    [customerBalanceKey(r.C_W_ID, r.C_D_ID, r.C_ID), balance],
  ];
}

/** How the readers below look a key up: `state.get` of a state map, or `tx.get`. */
export type Lookup = (key: string) => JsonValue | undefined;

/** The whole WAREHOUSE row, or undefined where a part is missing. For checks and tests. */
export function readWarehouse(get: Lookup, w: number): WarehouseRow | undefined {
  const s = get(warehouseKey(w)) as WarehouseStatic | undefined;
  const y = get(warehouseYtdKey(w)) as WarehouseYtd | undefined;
  return s === undefined || y === undefined ? undefined : warehouseRow(s, y);
}

/** The whole DISTRICT row, or undefined where a part is missing. For checks and tests. */
export function readDistrict(get: Lookup, w: number, d: number): DistrictRow | undefined {
  const s = get(districtKey(w, d)) as DistrictStatic | undefined;
  const y = get(districtYtdKey(w, d)) as DistrictYtd | undefined;
  const n = get(districtNextKey(w, d)) as DistrictNext | undefined;
  return s === undefined || y === undefined || n === undefined ? undefined : districtRow(s, y, n);
}

/** The whole CUSTOMER row, or undefined where a part is missing. For checks and tests. */
export function readCustomer(
  get: Lookup,
  w: number,
  d: number,
  c: number,
): CustomerRow | undefined {
  const s = get(customerKey(w, d, c)) as CustomerStatic | undefined;
  const b = get(customerBalanceKey(w, d, c)) as CustomerBalance | undefined;
  return s === undefined || b === undefined ? undefined : customerRow(s, b);
}

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

/**
 * The parts of the split tables: `static` is the row's key (`warehouseKey`, ...), the others are
 * the keys named after them (`warehouseYtdKey`, `districtNextKey`, `customerBalanceKey`, ...).
 */
export type WarehousePart = 'static' | 'ytd';
export type DistrictPart = 'static' | 'ytd' | 'next';
export type CustomerPart = 'static' | 'bal';

/** What a key is, with the ids it carries: how the consistency check reads a whole state. */
export type ParsedKey =
  | { table: 'WAREHOUSE'; part: WarehousePart; w: number }
  | { table: 'DISTRICT'; part: DistrictPart; w: number; d: number }
  | { table: 'CUSTOMER'; part: CustomerPart; w: number; d: number; c: number }
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
  [new RegExp(`^tpcc/w/${N}$`), ([w]) => ({ table: 'WAREHOUSE', part: 'static', w: w! })],
  [new RegExp(`^tpcc/w/${N}/ytd$`), ([w]) => ({ table: 'WAREHOUSE', part: 'ytd', w: w! })],
  [
    new RegExp(`^tpcc/w/${N}/d/${N}$`),
    ([w, d]) => ({ table: 'DISTRICT', part: 'static', w: w!, d: d! }),
  ],
  [
    new RegExp(`^tpcc/w/${N}/d/${N}/(ytd|next)$`),
    ([w, d], [, , part]) => ({ table: 'DISTRICT', part: part as 'ytd' | 'next', w: w!, d: d! }),
  ],
  [
    new RegExp(`^tpcc/w/${N}/d/${N}/c/${N}$`),
    ([w, d, c]) => ({ table: 'CUSTOMER', part: 'static', w: w!, d: d!, c: c! }),
  ],
  [
    new RegExp(`^tpcc/w/${N}/d/${N}/c/${N}/bal$`),
    ([w, d, c]) => ({ table: 'CUSTOMER', part: 'bal', w: w!, d: d!, c: c! }),
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
