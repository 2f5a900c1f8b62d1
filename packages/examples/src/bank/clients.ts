import { connect, type CreekClient } from '@creek/client';
import app, { type BankApp } from './app.js';
import { Bank } from './bank.js';

/** Node-side helpers that connect bank clients to a cluster (the page connects on its own). */

export interface Branches {
  readonly banks: Bank[];
  readonly clients: CreekClient<BankApp>[];
  close(): void;
}

/**
 * `count` clients, spread over the replicas: client k talks to replica k mod n first (and fails
 * over to the others in order), like RedBlue's branches each using their nearest site.
 */
export function connectBranches(urls: readonly string[], token: string, count: number): Branches {
  const clients = Array.from({ length: count }, (_, k) => {
    const first = k % urls.length;
    const rotated = [...urls.slice(first), ...urls.slice(0, first)];
    // `app` makes the client check arguments against the ops' Zod schemas before sending.
    return connect<BankApp>({ urls: rotated, token, app });
  });
  return {
    banks: clients.map((c) => new Bank(c)),
    clients,
    close: () => clients.forEach((c) => c.close()),
  };
}

/**
 * Each replica's stable balance of each account: a strong read through a client that talks to
 * that replica alone. `result[i][account]` is replica i's answer.
 */
export async function stableBalancesAtEachReplica(
  urls: readonly string[],
  token: string,
  accounts: readonly string[],
): Promise<Record<string, number>[]> {
  return Promise.all(
    urls.map(async (url) => {
      const client = connect<BankApp>({ urls: [url], token, app });
      try {
        const out: Record<string, number> = {};
        for (const a of accounts)
          out[a] = await client.invokeStrong('bank.balance', { account: a });
        return out;
      } finally {
        client.close();
      }
    }),
  );
}

/** Every account's balance through one client: the tentative view and the stable one. */
export async function tentativeAndStable(
  bank: Bank,
  accounts: readonly string[],
): Promise<{ account: string; tentative: number | null; stable: number }[]> {
  return Promise.all(
    accounts.map(async (account) => {
      let tentative: number | null = null;
      const stable = await bank.balance(account).setCallbacks({ onUpdate: (v) => (tentative = v) });
      return { account, tentative, stable };
    }),
  );
}
