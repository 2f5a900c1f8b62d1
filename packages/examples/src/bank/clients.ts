import { connect, type CreekClient } from '@creek/client';
import type { SignIn } from '../shared/cluster.js';
import app, { type BankApp } from './app.js';
import { Bank } from './bank.js';

/** Node-side helpers that connect bank clients to a cluster (the page connects on its own). */

/** Connects one bank client: as `user` through `signIn`, or anonymous. */
export function connectBank(
  urls: readonly string[],
  token: string,
  signIn: SignIn = null,
  user: string | null = null,
): CreekClient<BankApp> {
  // `app` makes the client check arguments against the ops' Zod schemas before sending. The
  // first URL is the client's replica (connectBranches): on one machine, probed round trips differ
  // by load, not distance, so the client keeps to the order given (`nearest: false`).
  if (signIn === null || user === null)
    return connect<BankApp>({ urls, token, app, nearest: false });
  return connect<BankApp>({ urls, token, app, nearest: false, auth: () => signIn(user) });
}

export interface Branches {
  readonly banks: Bank[];
  readonly clients: CreekClient<BankApp>[];
  /** Whom each client is signed in as (null: anonymous). */
  readonly users: (string | null)[];
  close(): void;
}

/**
 * `count` clients, spread over the replicas: client k talks to replica k mod n first (and fails
 * over to the others in order), like RedBlue's branches each using their nearest site. With
 * `signIn`, client k signs in as `users[k mod users.length]`.
 */
export function connectBranches(
  urls: readonly string[],
  token: string,
  count: number,
  signIn: SignIn = null,
  users: readonly string[] = [],
): Branches {
  if (signIn !== null && users.length === 0)
    throw new Error('connectBranches: signing in needs at least one user');
  const who = Array.from({ length: count }, (_, k) =>
    signIn === null ? null : users[k % users.length]!,
  );
  const clients = who.map((user, k) => {
    const first = k % urls.length;
    const rotated = [...urls.slice(first), ...urls.slice(0, first)];
    return connectBank(rotated, token, signIn, user);
  });
  return {
    banks: clients.map((c) => new Bank(c)),
    clients,
    users: who,
    close: () => clients.forEach((c) => c.close()),
  };
}

/**
 * Each replica's stable balance of each account: a strong read through a client that talks to
 * that replica alone (signed in as `reader` through `signIn`, where the cluster wants users).
 * `result[i][account]` is replica i's answer.
 */
export async function stableBalancesAtEachReplica(
  urls: readonly string[],
  token: string,
  accounts: readonly string[],
  signIn: SignIn = null,
  reader: string | null = null,
): Promise<Record<string, number>[]> {
  return Promise.all(
    urls.map(async (url) => {
      const client = connectBank([url], token, signIn, reader);
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
