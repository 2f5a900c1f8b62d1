import { audit, type Audit, type RecordedSale } from './audit.js';
import type { Purchase, TicketClient } from './purchase.js';
import { runRetailer } from './retailer.js';

export interface SaleOptions {
  /** Stocks the event (the organizer) and reads the final state. */
  readonly organizer: TicketClient;
  /** One client per retailer, each connected to its own replica where there are enough. */
  readonly retailers: readonly TicketClient[];
  /** A new event name: its stock starts empty. */
  readonly event: string;
  readonly tickets: number;
  readonly threshold: number;
  /** Called as customers get an answer: how many were handed a ticket so far. */
  readonly onProgress?: (handedOut: number) => void;
  /** How long to wait for every retailer's replica to see the stock; default 20 s. */
  readonly stockTimeoutMs?: number;
}

export interface SaleResult {
  readonly event: string;
  readonly purchases: readonly Purchase[];
  readonly recorded: readonly RecordedSale[];
  readonly audit: Audit;
  /** From the first purchase to the last final view. */
  readonly wallMs: number;
}

/**
 * One run of §6.3.2: the organizer stocks `tickets` tickets, every retailer sells until a final
 * view says sold out, and the final state is read back with strong reads and audited.
 */
export async function runSale(options: SaleOptions): Promise<SaleResult> {
  const { organizer, retailers, event, tickets, threshold } = options;
  if (retailers.length === 0) throw new Error('runSale: give at least one retailer');
  const stocked = await organizer.invokeStrong('tickets.stock', { event, count: tickets });
  if (stocked.stock !== tickets)
    throw new Error(
      `event '${event}' already had tickets (${stocked.stock} in stock): use a new event name`,
    );
  await waitForStock(retailers, event, tickets, options.stockTimeoutMs ?? 20_000);

  let handedOut = 0;
  const started = performance.now();
  const perRetailer = await Promise.all(
    retailers.map((client, retailer) =>
      runRetailer({
        client,
        event,
        threshold,
        retailer,
        onDecided: (d) => {
          if (d.ticket !== null) options.onProgress?.(++handedOut);
        },
      }),
    ),
  );
  const wallMs = performance.now() - started;
  const purchases = perRetailer.flat();

  // Strong reads: linearizable, so they see every purchase whose final view came before them.
  const [recorded, left] = await Promise.all([
    organizer.invokeStrong('tickets.sales', { event }),
    organizer.invokeStrong('tickets.left', { event }),
  ]);
  return {
    event,
    purchases,
    recorded,
    audit: audit({ first: stocked.first, stocked: tickets, threshold, purchases, recorded, left }),
    wallMs,
  };
}

/**
 * The sale opens once every retailer's replica has the stock in its local state: until then a
 * preliminary view there would say "sold out" for no reason but gossip not having arrived yet.
 */
async function waitForStock(
  clients: readonly TicketClient[],
  event: string,
  tickets: number,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  await Promise.all(
    clients.map(async (client, i) => {
      for (;;) {
        const left = await client.invokeWeak('tickets.left', { event });
        if (left >= tickets) return;
        if (Date.now() > deadline)
          throw new Error(
            `retailer ${i}'s replica still sees ${left} of ${tickets} tickets after ${timeoutMs} ms`,
          );
        await new Promise((r) => setTimeout(r, 20));
      }
    }),
  );
}
