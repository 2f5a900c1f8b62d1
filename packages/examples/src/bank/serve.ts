import { fileURLToPath } from 'node:url';
import { DEV_USERS, type DevIdentity } from '@creek/server/node';
import { servePage, type ServedPage } from '../shared/page-server.js';
import type { PageConfig } from './page-config.js';

/**
 * Serves the bank's page (page.tsx, a React app): one shared account seen from two branches
 * (RedBlue §4.2's Alice in the EU and Bob in the US), each branch a client of a different replica.
 * With `signIn` (the cluster's dev identity) each branch signs in, as alice and bob at first, and
 * the account is `owner`'s (default alice).
 */
export async function serveBankPage(options: {
  urls: readonly string[];
  token: string;
  account?: string;
  rateBps?: number;
  /** After this long (ms) with no replica answering, the page is offline and queues ops. */
  offlineAfterMs?: number;
  port?: number;
  /** The visualizer watching this cluster, linked from the page. */
  visualizer?: string;
  /** The cluster's dev identity: the page's branches sign in with its tokens. */
  signIn?: DevIdentity;
  /** Who owns the account the page opens (with `signIn`); default alice. */
  owner?: string;
}): Promise<ServedPage> {
  const { urls } = options;
  const signIn = options.signIn;
  const branch = (name: string, replica: number, user: string): PageConfig['branches'][number] => ({
    name,
    replica,
    // Its own replica first; the others only to fail over to.
    urls: [...urls.slice(replica), ...urls.slice(0, replica)],
    ...(signIn === undefined ? {} : { user }),
  });
  const config: PageConfig = {
    token: options.token,
    account: options.account ?? 'shared',
    rateBps: options.rateBps ?? 100,
    offlineAfterMs: options.offlineAfterMs ?? 3_000,
    ...(signIn === undefined
      ? {}
      : { signIn: { users: [...DEV_USERS], owner: options.owner ?? 'alice' } }),
    // Signed in, a branch's header says who uses it; anonymous, the name says whose it is.
    branches: [
      branch(signIn === undefined ? 'Alice · EU branch' : 'EU branch', 0, 'alice'),
      branch(signIn === undefined ? 'Bob · US branch' : 'US branch', 1 % urls.length, 'bob'),
    ],
  };
  return servePage({
    title: 'Creek bank',
    entry: fileURLToPath(new URL('./page.tsx', import.meta.url)),
    config: config as unknown as Record<string, unknown>,
    css: CSS,
    port: options.port,
    ...(options.visualizer === undefined ? {} : { visualizer: options.visualizer }),
    ...(signIn === undefined ? {} : { signIn }),
  });
}

const CSS = `
#branches { display: flex; gap: 1rem; flex-wrap: wrap; }
.branch { flex: 1 1 18rem; border: 1px solid #ccd; border-radius: 6px; padding: .2rem 1rem 1rem; }
.branch h2 { font-size: 1.05rem; display: flex; justify-content: space-between; gap: .5rem; flex-wrap: wrap; }
.balance { font-size: 1.1rem; }
.balance .value { font-weight: 600; font-variant-numeric: tabular-nums; }
.branch input { width: 7rem; font: inherit; }
.hint, .muted { color: #667; font-size: .9rem; }
#log { width: 100%; } #log td { font-variant-numeric: tabular-nums; vertical-align: top; }
`;
