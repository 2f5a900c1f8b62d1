import { defineApp, op } from '@creek/app';
import { tpccOps, type TpccApp } from '../../src/tpcc/app.js';
import { districtKey, districtNextKey, districtYtdKey } from '../../src/tpcc/keys.js';

/**
 * The TPC-C app with one transaction made wrong on purpose, for tests that the consistency check
 * is not vacuous: `op` runs as written, then its DISTRICT row (every part of it, keys.ts) is put
 * back as it was read, as if the op forgot to write it (New-Order: D_NEXT_O_ID never advances;
 * Payment: D_YTD never grows).
 */
export function forgettingTheDistrict(name: 'tpcc.newOrder' | 'tpcc.payment'): TpccApp {
  const original = tpccOps[name];
  // The same op names and argument types as the real app, so tests use it where they use that.
  return defineApp({
    ...tpccOps,
    [name]: op({
      args: original.args,
      run(tx, a: { W_ID: number; D_ID: number }) {
        const keys = [districtKey, districtYtdKey, districtNextKey].map((k) => k(a.W_ID, a.D_ID));
        const district = keys.map((k) => [k, tx.get(k)] as const);
        const result = (original.run as (t: typeof tx, x: unknown) => unknown)(tx, a);
        for (const [k, v] of district) if (v !== undefined) tx.put(k, v);
        return result as never;
      },
    }),
  }) as unknown as TpccApp;
}
