import { defineApp, type OpDefinitions } from '@creek/app';
import ads from './ads/app.js';
import bank from './bank/app.js';
import ticketing from './ticketing/app.js';
import tpcc from './tpcc/app.js';

/**
 * Every example's ops in one app: what `npm start` runs, so that each example (and its page) can
 * use the same local cluster with `--urls ... --token ...`. `npm start` signs users in with its dev
 * identity provider, and the visualizer's built-in workload (`kv.put`, `kv.increment`) runs as a
 * signed-in dev user, so the built-in ops are open to signed-in users here: in this dev-only
 * combination any of them may write any example's keys through `kv.*`. Each example's own app
 * keeps them closed.
 */
function merge(...apps: { readonly definitions: OpDefinitions }[]): OpDefinitions {
  const all: Record<string, OpDefinitions[string]> = {};
  for (const app of apps)
    for (const [name, def] of Object.entries(app.definitions)) {
      if (name in all) throw new Error(`two examples define the operation '${name}'`);
      all[name] = def;
    }
  return all;
}

export default defineApp(merge(ticketing, ads, bank, tpcc), { builtins: 'signed-in' });
