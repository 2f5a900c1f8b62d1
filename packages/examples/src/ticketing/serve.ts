import { fileURLToPath } from 'node:url';
import { DEV_USERS, type DevIdentity } from '@creek/server/node';
import { servePage, type ServedPage } from '../shared/page-server.js';
import { receiptHandler } from './receipt.js';

export interface TicketingPageOptions {
  readonly urls: readonly string[];
  readonly token: string;
  /** An event with tickets in stock (see `tickets.stock`). */
  readonly event: string;
  readonly threshold: number;
  readonly port?: number;
  /** The visualizer watching this cluster, linked from the page. */
  readonly visualizer?: string;
  /** The cluster's dev identity: the page signs in with its tokens, as `user` at first. */
  readonly signIn?: DevIdentity;
  /** Whom the page is signed in as at first (with `signIn`); default alice. */
  readonly user?: string;
}

// The page, a React app next to this file (tsx runs main.ts from source; esbuild bundles it).
const ENTRY = fileURLToPath(new URL('./page.tsx', import.meta.url));

const CSS = `
#stock { font-size: 1.3rem; font-variant-numeric: tabular-nums; }
#purchases { padding-left: 0; list-style: none; }
#purchases li { margin: .3rem 0; padding: .3rem .6rem; }`;

/** Serves the ticketing page for one event of a running cluster. */
export function serveTicketingPage(options: TicketingPageOptions): Promise<ServedPage> {
  return servePage({
    title: 'Creek Tickets',
    entry: ENTRY,
    config: {
      urls: options.urls,
      token: options.token,
      event: options.event,
      threshold: options.threshold,
      ...(options.signIn === undefined
        ? {}
        : { signIn: { users: [...DEV_USERS], user: options.user ?? 'alice' } }),
    },
    css: CSS,
    // Server-rendered receipts, read after the browser's context token.
    routes: receiptHandler({ urls: options.urls, token: options.token, event: options.event }),
    ...(options.signIn !== undefined ? { signIn: options.signIn } : {}),
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.visualizer !== undefined ? { visualizer: options.visualizer } : {}),
  });
}
