import { purchase, type Decision, type Purchase, type TicketClient } from './purchase.js';

export interface RetailerOptions {
  readonly client: TicketClient;
  readonly event: string;
  readonly threshold: number;
  /** The retailer's number; its customers are `r<retailer>-c<k>`. */
  readonly retailer: number;
  /**
   * Purchases sold on the preliminary view whose final view may still be outstanding. A replica
   * refuses more than 1024 invocations in flight per connection, so a fast retailer pauses here.
   */
  readonly maxInFlight?: number;
  /** Called as each customer gets an answer (for progress output). */
  readonly onDecided?: (d: Decision) => void;
}

/**
 * One retailer (Correctables §6.3.2): serves customers one after another, each purchase an
 * `invoke` of the dequeue. Above the threshold it moves on to the next customer as soon as the
 * preliminary view is in, leaving the final view to complete in the background; below it, it
 * waits for the final view. It stops when a final view says the event is sold out.
 *
 * Resolves with every purchase once all their final views are in.
 */
export async function runRetailer(options: RetailerOptions): Promise<Purchase[]> {
  const { client, event, threshold, retailer } = options;
  const maxInFlight = options.maxInFlight ?? 512;
  const all: Promise<Purchase>[] = [];
  const inFlight = new Set<Promise<Purchase>>();
  for (let k = 1; ; k++) {
    while (inFlight.size >= maxInFlight) await Promise.race(inFlight);
    const p = purchase(client, event, `r${retailer}-c${k}`, retailer, threshold);
    all.push(p.done);
    inFlight.add(p.done);
    const settle = (): void => void inFlight.delete(p.done);
    p.done.then(settle, settle);
    const decision = await p.decided;
    options.onDecided?.(decision);
    // Only a final view may say "sold out": a preliminary one leaves nothing above the threshold,
    // so the rule never trusts it, and a retailer never stops on a replica's stale view.
    if (decision.soldOn === 'final' && decision.ticket === null) break;
  }
  return Promise.all(all);
}
