import { fileURLToPath } from 'node:url';
import { servePage, type ServedPage } from '../shared/page-server.js';

export interface TicketingPageOptions {
  readonly urls: readonly string[];
  readonly token: string;
  /** An event with tickets in stock (see `tickets.stock`). */
  readonly event: string;
  readonly threshold: number;
  readonly port?: number;
  /** The visualizer watching this cluster, linked from the page. */
  readonly visualizer?: string;
}

// The page script is TypeScript next to this file (tsx runs main.ts from source).
const ENTRY = fileURLToPath(new URL('./page.ts', import.meta.url));

const BODY = `
<h1>Creek tickets</h1>
<p>Event <code id="event"></code>: <strong id="stock">…</strong> tickets left
  <span id="stock-level"></span></p>
<p><button id="buy" disabled>buy</button>
  <button id="rush" disabled title="one purchase through every replica at once">rush: one buyer per replica</button></p>
<p class="hint">While the preliminary view leaves more than <span id="threshold"></span> tickets,
  a purchase is handed over on it at once ("reserved (tentative)"); the final view then confirms
  it or revokes it. Below that, the page waits for the final view. Concurrent buyers on different
  replicas ("rush") can be handed the same ticket tentatively: the final view gives all but one
  of them another ticket, or none once the stock is gone.</p>
<ol id="purchases"></ol>`;

const CSS = `
.hint { color: #5a6270; font-size: .9rem; }
#purchases li { margin: .2rem 0; font-family: ui-monospace, monospace; font-size: .9rem; }`;

/** Serves the ticketing page for one event of a running cluster. */
export function serveTicketingPage(options: TicketingPageOptions): Promise<ServedPage> {
  return servePage({
    title: 'Creek tickets',
    entry: ENTRY,
    config: {
      urls: options.urls,
      token: options.token,
      event: options.event,
      threshold: options.threshold,
    },
    body: BODY,
    css: CSS,
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.visualizer !== undefined ? { visualizer: options.visualizer } : {}),
  });
}
