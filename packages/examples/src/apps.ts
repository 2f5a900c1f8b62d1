import { defineApp, type OpDefinitions } from '@creek/app';
import ads from './ads/app.js';
import bank from './bank/app.js';
import ticketing from './ticketing/app.js';
import tpcc from './tpcc/app.js';

/**
 * Every example's ops in one app: what `npm start` runs, so that each example (and its page) can
 * use the same local cluster with `--urls ... --token ...`.
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

export default defineApp(merge(ticketing, ads, bank, tpcc));
