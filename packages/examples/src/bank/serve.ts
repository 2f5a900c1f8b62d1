import { fileURLToPath } from 'node:url';
import { servePage, type ServedPage } from '../shared/page-server.js';
import type { PageConfig } from './page-config.js';

/**
 * Serves the bank's page: one shared account seen from two branches (RedBlue §4.2's Alice in the
 * EU and Bob in the US), each branch a client of a different replica.
 */
export async function serveBankPage(options: {
  urls: readonly string[];
  token: string;
  account?: string;
  rateBps?: number;
  /** How often the page re-reads the balances (ms); 0: only after ops and on Refresh. */
  refreshMs?: number;
  port?: number;
  /** The visualizer watching this cluster, linked from the page. */
  visualizer?: string;
}): Promise<ServedPage> {
  const { urls } = options;
  const branch = (name: string, replica: number): PageConfig['branches'][number] => ({
    name,
    replica,
    // Its own replica first; the others only to fail over to.
    urls: [...urls.slice(replica), ...urls.slice(0, replica)],
  });
  const config: PageConfig = {
    token: options.token,
    account: options.account ?? 'shared',
    rateBps: options.rateBps ?? 100,
    refreshMs: options.refreshMs ?? 2_000,
    branches: [branch('Alice, EU branch', 0), branch('Bob, US branch', 1 % urls.length)],
  };
  return servePage({
    title: 'Creek bank',
    entry: fileURLToPath(new URL('./page.ts', import.meta.url)),
    config: config as unknown as Record<string, unknown>,
    body: BODY,
    css: CSS,
    port: options.port,
    ...(options.visualizer === undefined ? {} : { visualizer: options.visualizer }),
  });
}

const BODY = `
<h1>Creek bank</h1>
<p>One account, two branches, each talking to its own replica (RedBlue §4.2). A <b>deposit</b> is
weak: the branch's replica answers at once and the deposit is ordered later; adding commutes, so
the order does not change the sum. A <b>withdrawal</b> is strong: you see the replica's
<span class="tentative">tentative</span> answer first, then the
<span class="stable">stable</span> one, computed where the withdrawal sits in the order every
replica agrees on — the one a teller hands cash out on. <b>Accrue interest</b> reads the balance
this branch sees, computes the interest, and deposits that amount (a shadow op, RedBlue §5).</p>
<div id="branches"></div>
<p><button id="race">Withdraw at both branches at once</button>
<span class="hint">each branch withdraws the amount in its own box, concurrently (RedBlue §5.3)</span></p>
<h2>Operations</h2>
<table id="log">
<thead><tr><th>#</th><th>branch</th><th>operation</th><th>tentative</th><th>stable</th></tr></thead>
<tbody></tbody>
</table>
`;

const CSS = `
#branches { display: flex; gap: 1rem; flex-wrap: wrap; }
.branch { flex: 1 1 18rem; border: 1px solid #ccd; border-radius: 6px; padding: .2rem 1rem 1rem; }
.branch h2 { font-size: 1.05rem; }
.balance { font-size: 1.1rem; }
.balance .value { font-weight: 600; font-variant-numeric: tabular-nums; }
.branch input { width: 7rem; font: inherit; }
.hint, .muted { color: #667; font-size: .9rem; }
#log td { font-variant-numeric: tabular-nums; }
`;
