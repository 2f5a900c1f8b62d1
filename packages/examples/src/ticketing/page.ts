/**
 * The ticketing page (runs in the browser): a "buy" button whose purchase shows the Correctable's
 * views as they come — "reserved (tentative)" on the preliminary view, then "confirmed" or
 * "revoked" on the final one — and the stock left. The page applies the retailer's threshold rule
 * (Correctables §4.3): above it, the preliminary ticket is handed over at once; at or below it,
 * the page says it waits for the final view.
 *
 * "Rush" buys one ticket through every replica at the same moment: concurrent purchases that each
 * replica orders before it hears of the others, so their preliminary tickets collide and the final
 * views revoke some of them, as with the load's retailers.
 *
 * `import type` for the app: the browser gets the client SDK only, never the server's code.
 */
import { connect, type CreekClient } from '@creek/client';
import { z } from 'zod';
import type { Bought, TicketingApp } from './app.js';
import { OUTCOME_LABEL, outcomeOf, sellsOnPreliminary } from './policy.js';

const ConfigSchema = z.object({
  urls: z.array(z.string()).min(1),
  token: z.string(),
  event: z.string(),
  threshold: z.number().int().min(0),
});

const config = ConfigSchema.parse((globalThis as { CREEK_PAGE?: unknown }).CREEK_PAGE);
/** One client per replica, each preferring its own and failing over to the others. */
const clients: CreekClient<TicketingApp>[] = config.urls.map((url, i) =>
  connect<TicketingApp>({
    urls: [url, ...config.urls.filter((_, j) => j !== i)],
    token: config.token,
  }),
);
const customerPrefix = `web-${Math.random().toString(36).slice(2, 8)}`;
let purchases = 0;
/** The stock never grows during a sale, so the lowest final count seen is the latest. */
let stableLeft = Infinity;

const $ = (id: string): HTMLElement => {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`the page has no #${id}`);
  return el;
};

$('event').textContent = config.event;
$('threshold').textContent = String(config.threshold);

function showStock(left: number, level: 'tentative' | 'stable'): void {
  if (level === 'stable') stableLeft = Math.min(stableLeft, left);
  $('stock').textContent = String(level === 'stable' ? stableLeft : left);
  $('stock-level').textContent = level === 'tentative' ? '(tentative)' : '';
  $('stock').className = level;
}

function buy(creek: CreekClient<TicketingApp>): void {
  const customer = `${customerPrefix}-${++purchases}`;
  const row = document.createElement('li');
  const trail: string[] = [];
  const show = (step: string, state: string, cls: string): void => {
    trail.push(step);
    row.textContent = `${customer} (replica ${creek.replica() ?? '?'}): ${trail.join(' → ')}`;
    row.dataset.state = state;
    row.className = cls;
  };
  row.textContent = `${customer}: buying …`;
  row.dataset.state = 'pending';
  $('purchases').prepend(row);

  let preliminary: Bought | null | undefined;
  /** Decided on the first preliminary view, as a retailer does (§4.3). */
  let early = false;
  creek.invoke('tickets.buy', { event: config.event, customer }).setCallbacks({
    onUpdate: (view) => {
      if (view !== null) showStock(view.remaining, 'tentative');
      const first = preliminary === undefined;
      if (first) {
        preliminary = view;
        early = sellsOnPreliminary(view, config.threshold);
      }
      // Later preliminary views (the replica re-executed after a reorder) are shown too, but
      // they do not change the decision.
      if (view === null) return show('sold out (tentative)', 'waiting', 'tentative');
      const wait =
        first && !early ? `, ≤ ${config.threshold} left: waiting for the final view` : '';
      show(
        `${view.ticket} reserved (tentative)${wait}`,
        early ? 'reserved' : 'waiting',
        'tentative',
      );
    },
    onFinal: (final) => {
      showStock(final?.remaining ?? 0, 'stable');
      const outcome = outcomeOf(early ? 'preliminary' : 'final', preliminary, final);
      const label =
        final === null
          ? OUTCOME_LABEL[outcome]
          : outcome === 'reissued'
            ? `revoked: ${preliminary?.ticket} went to another buyer; you have ${final.ticket} (confirmed)`
            : `${final.ticket} confirmed`;
      const state =
        outcome === 'reissued' || outcome === 'withdrawn'
          ? 'revoked'
          : outcome === 'sold-out'
            ? 'sold-out'
            : 'confirmed';
      show(label, state, state === 'confirmed' ? 'confirmed' : 'revoked');
    },
    onError: (e) => show(`error: ${e.message}`, 'error', 'error'),
  });
}

$('buy').addEventListener('click', () => buy(clients[0]!));
$('rush').addEventListener('click', () => clients.forEach(buy));
clients[0]!.invokeWeak('tickets.left', { event: config.event }).then(
  (left) => {
    showStock(left, 'tentative');
    for (const id of ['buy', 'rush']) ($(id) as HTMLButtonElement).disabled = false;
  },
  (e: unknown) => {
    $('stock').textContent = `cannot reach the cluster: ${e instanceof Error ? e.message : e}`;
  },
);
