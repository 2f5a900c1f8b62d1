import type { CreekClient } from '@creek/client';
import type { Bought, TicketingApp } from './app.js';
import { outcomeOf, sellsOnPreliminary, type Outcome } from './policy.js';

export type TicketClient = CreekClient<TicketingApp>;

/** One customer's purchase, once its final view is in. Times are ms since the invoke. */
export interface Purchase {
  readonly retailer: number;
  readonly customer: string;
  /** The view the sale was decided on (Correctables §4.3: preliminary above the threshold). */
  readonly soldOn: 'preliminary' | 'final';
  /** The first preliminary view; undefined when the final view came first (or alone). */
  readonly preliminary: Bought | null | undefined;
  readonly final: Bought | null;
  readonly outcome: Outcome;
  /** Until the customer had an answer: the preliminary view when sold on it, else the final. */
  readonly saleMs: number;
  /** Until the final view, whichever view the sale was made on. */
  readonly finalMs: number;
}

/** What the retailer learns when the sale is decided, before the final view if it sold early. */
export interface Decision {
  readonly soldOn: 'preliminary' | 'final';
  /** The ticket the customer was handed (null: sold out, from the final view). */
  readonly ticket: string | null;
}

/**
 * Invokes one purchase (an `invoke` of `tickets.buy`, a dequeue) and applies the threshold rule to
 * its views. `decided` resolves when the customer gets an answer; `done` when the final view is in.
 */
export function purchase(
  client: TicketClient,
  event: string,
  customer: string,
  retailer: number,
  threshold: number,
): { decided: Promise<Decision>; done: Promise<Purchase> } {
  const start = performance.now();
  const decided = deferred<Decision>();
  const done = deferred<Purchase>();

  let preliminary: Bought | null | undefined;
  let soldAt: number | undefined;
  client.invoke('tickets.buy', { event, customer }).setCallbacks({
    onUpdate: (view) => {
      // Only the first preliminary view counts: that is when the retailer decides. Later ones
      // (a replica re-executing after a reorder) do not un-sell a ticket already handed over.
      if (preliminary !== undefined) return;
      preliminary = view;
      if (sellsOnPreliminary(view, threshold)) {
        soldAt = performance.now() - start;
        decided.resolve({ soldOn: 'preliminary', ticket: view.ticket });
      }
    },
    onFinal: (final) => {
      const finalMs = performance.now() - start;
      const soldOn = soldAt === undefined ? 'final' : 'preliminary';
      if (soldOn === 'final') decided.resolve({ soldOn, ticket: final?.ticket ?? null });
      done.resolve({
        retailer,
        customer,
        soldOn,
        preliminary,
        final,
        outcome: outcomeOf(soldOn, preliminary, final),
        saleMs: soldAt ?? finalMs,
        finalMs,
      });
    },
    onError: (e) => {
      const error = new Error(`purchase by ${customer} failed: ${e.message}`, { cause: e });
      decided.reject(error);
      done.reject(error);
    },
  });
  return { decided: decided.promise, done: done.promise };
}

function deferred<T>(): {
  promise: Promise<T>;
  resolve(v: T): void;
  reject(e: Error): void;
} {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<T>((a, b) => {
    resolve = a;
    reject = b;
  });
  // A caller that awaits only one of the two must not get an unhandled rejection from the other.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}
