import { fileURLToPath } from 'node:url';
import { connect, Forbidden, InvalidArguments, Unauthorized } from '@creek/client';
import { LocalCluster } from '@creek/server/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import app, { ticketName } from '../src/ticketing/app.js';
import { sellsOnPreliminary } from '../src/ticketing/policy.js';
import type { Purchase, TicketClient } from '../src/ticketing/purchase.js';
import { runSale } from '../src/ticketing/sale.js';

/**
 * The ticketing example against real replica processes running its app: retailers on different
 * replicas, with a little delay between replicas so their preliminary views really disagree.
 * The replicas verify the tokens of the cluster's dev identity: the organizer signs in as `admin`,
 * retailer i as `retailer-i`. Outcomes only; no timing is asserted.
 */
const APP = fileURLToPath(new URL('../src/ticketing/app.ts', import.meta.url));
const RETAILERS = 4;

let cluster: LocalCluster;
let organizer: TicketClient;
let retailers: TicketClient[];

beforeAll(async () => {
  cluster = await LocalCluster.start({
    replicas: 3,
    app: APP,
    logLevel: 'error',
    devIdentity: true,
  });
  await cluster.delayBetweenReplicas(5);
  organizer = client(0, 'admin');
  retailers = Array.from({ length: RETAILERS }, (_, i) => client(i, `retailer-${i}`));
}, 60_000);

/** A client preferring replica i, signed in as `user` (null: anonymous). */
function client(i: number, user: string | null): TicketClient {
  const urls = [cluster.url(i % 3), ...cluster.urls];
  const identity = cluster.identity!;
  return user === null
    ? connect({ urls, token: cluster.token, app })
    : connect({
        urls,
        token: cluster.token,
        app,
        auth: async () => (await identity.mint(user)).token,
      });
}

afterAll(async () => {
  organizer?.close();
  for (const r of retailers ?? []) r.close();
  await cluster?.stop(1_000);
});

const names = (n: number): string[] => Array.from({ length: n }, (_, i) => ticketName(i));

describe('ticketing on a real cluster', () => {
  it('100 tickets, 4 retailers, threshold 20: every ticket sold exactly once by final views', async () => {
    const threshold = 20;
    const r = await runSale({ organizer, retailers, event: 'hundred', tickets: 100, threshold });
    expect(r.audit.problems).toEqual([]);
    expect(r.audit.ok).toBe(true);

    // The final state: each ticket recorded once, nothing left.
    expect(r.recorded.map((s) => s.ticket).sort()).toEqual(names(100));
    expect(await organizer.invokeStrong('tickets.left', { event: 'hundred' })).toBe(0);

    // The customers' final views: the same 100 tickets, none twice, each to its recorded buyer.
    const held = r.purchases.filter((p) => p.final !== null);
    expect(held.map((p) => p.final!.ticket).sort()).toEqual(names(100));
    const buyer = new Map(r.recorded.map((s) => [s.ticket, s.customer]));
    for (const p of held) expect(buyer.get(p.final!.ticket)).toBe(p.customer);

    // The rule: sold on a preliminary view only when it left more than the threshold; below it,
    // the customer's answer is the final view.
    for (const p of r.purchases) {
      const early = p.preliminary !== undefined && sellsOnPreliminary(p.preliminary, threshold);
      expect(p.soldOn).toBe(early ? 'preliminary' : 'final');
      if (p.soldOn === 'final') expect(p.saleMs).toBe(p.finalMs);
    }

    // Tentative against stable, recomputed from the views themselves.
    const o = r.audit.outcomes;
    const early = r.purchases.filter((p) => p.soldOn === 'preliminary');
    const late = r.purchases.filter((p) => p.soldOn === 'final');
    expect(o.confirmed + o.reissued + o.withdrawn).toBe(early.length);
    expect(o.sold + o['sold-out']).toBe(late.length);
    expect(o.confirmed).toBe(early.filter((p) => p.final?.ticket === p.preliminary?.ticket).length);
    expect(o.withdrawn).toBe(early.filter((p) => p.final === null).length);
    expect(o.reissued).toBe(
      early.filter((p) => p.final !== null && p.final.ticket !== p.preliminary?.ticket).length,
    );
    // Every ticket went to exactly one customer: those confirmed, reissued or sold on the final view.
    expect(o.confirmed + o.reissued + o.sold).toBe(100);

    // Each retailer's own list (tickets.mine, its user's) holds exactly the tickets its final
    // views gave it, and no other retailer's.
    for (let i = 0; i < RETAILERS; i++) {
      const finals = r.purchases
        .filter((p) => p.retailer === i && p.final !== null)
        .map((p) => p.final!.ticket)
        .sort();
      const mine = await retailers[i]!.invokeStrong('tickets.mine', { event: 'hundred' });
      expect(mine.map((t) => t.ticket).sort(), `retailer ${i}`).toEqual(finals);
      expect(mine.every((t) => t.event === 'hundred')).toBe(true);
    }

    // Each retailer stopped on its own final "sold out", and only then.
    for (let i = 0; i < RETAILERS; i++) {
      const own = r.purchases.filter((p) => p.retailer === i);
      const last = own[own.length - 1]!;
      expect(last.soldOn).toBe('final');
      expect(last.final).toBeNull();
      const stoppedEarlier = own
        .slice(0, -1)
        .filter((p: Purchase) => p.soldOn === 'final' && p.final === null);
      expect(stoppedEarlier).toEqual([]);
    }
  });

  it('with a threshold above the stock every sale waits for the final view: nothing revoked', async () => {
    const r = await runSale({
      organizer,
      retailers,
      event: 'careful',
      tickets: 30,
      threshold: 1_000,
    });
    expect(r.audit.problems).toEqual([]);
    expect(r.purchases.every((p) => p.soldOn === 'final')).toBe(true);
    expect(r.audit.outcomes).toMatchObject({ confirmed: 0, reissued: 0, withdrawn: 0, sold: 30 });
    expect(r.audit.outcomes['sold-out']).toBe(RETAILERS);
  });

  it('restocking continues the numbering; bad arguments never reach the cluster', async () => {
    const first = await organizer.invokeStrong('tickets.stock', { event: 'restock', count: 2 });
    expect(first).toEqual({ first: 0, count: 2, stock: 2 });
    const bought = await organizer.invoke('tickets.buy', { event: 'restock', customer: 'a' });
    expect(bought).toEqual({ ticket: 'T0001', position: 0, remaining: 1 });
    const again = await organizer.invokeStrong('tickets.stock', { event: 'restock', count: 2 });
    expect(again).toEqual({ first: 2, count: 2, stock: 3 });
    expect(await organizer.invokeStrong('tickets.sales', { event: 'restock' })).toEqual([
      { ticket: 'T0001', customer: 'a' },
    ]);
    expect(await organizer.invoke('tickets.buy', { event: 'nothing', customer: 'b' })).toBeNull();

    await expect(
      organizer.invoke('tickets.buy', { event: 'a/b', customer: 'c' }),
    ).rejects.toBeInstanceOf(InvalidArguments);
    await expect(organizer.invokeStrong('tickets.stock', { event: 'x', count: 0 })).rejects.toThrow(
      /count/,
    );
  });

  it('who may do what, at real replicas: anyone sees the stock; buyers see only their own tickets; the organizer alone stocks and reads the sales', async () => {
    const alice = client(1, 'alice');
    const bob = client(2, 'bob');
    const anonymous = client(0, null);
    try {
      await organizer.invokeStrong('tickets.stock', { event: 'mine', count: 5 });
      const a = await alice.invokeStrong('tickets.buy', { event: 'mine', customer: 'Alice' });
      const b = await bob.invokeStrong('tickets.buy', { event: 'mine', customer: 'Bob' });
      expect(await alice.invokeStrong('tickets.mine', { event: 'mine' })).toEqual([
        { event: 'mine', ticket: a!.ticket },
      ]);
      // Bob's list is Bob's, whatever he passes: the schema drops an argument naming someone.
      const bobs = [{ event: 'mine', ticket: b!.ticket }];
      expect(await bob.invokeStrong('tickets.mine', { event: 'mine' })).toEqual(bobs);
      const named = { event: 'mine', user: 'alice' } as { event: string };
      expect(await bob.invokeStrong('tickets.mine', named)).toEqual(bobs);
      // A live query of it: Alice's second ticket appears in her watch, never Bob's.
      const seen: string[][] = [];
      const watch = alice.watch('tickets.mine', { event: 'mine' });
      const stop = watch.subscribe({
        onView: (held) => seen.push(held.map((t) => t.ticket)),
      });
      const a2 = await alice.invokeStrong('tickets.buy', { event: 'mine', customer: 'Alice' });
      await cluster.until(
        async () => seen.some((v) => v.includes(a2!.ticket)),
        20_000,
        "Alice's second ticket in her watch",
      );
      stop();
      watch.close();
      for (const v of seen) expect(v).not.toContain(b!.ticket);

      // Anonymous: the stock only.
      expect(await anonymous.invokeStrong('tickets.left', { event: 'mine' })).toBe(2);
      await expect(
        anonymous.invokeStrong('tickets.buy', { event: 'mine', customer: 'x' }),
      ).rejects.toBeInstanceOf(Unauthorized);
      await expect(anonymous.invokeStrong('tickets.mine', {})).rejects.toThrow(
        /'tickets.mine' needs a signed-in user/,
      );
      // A plain user neither stocks nor reads everyone's sales.
      await expect(
        alice.invokeStrong('tickets.stock', { event: 'mine', count: 1 }),
      ).rejects.toBeInstanceOf(Forbidden);
      await expect(alice.invokeStrong('tickets.sales', { event: 'mine' })).rejects.toThrow(
        /'tickets.sales' is not allowed for user 'alice'/,
      );
      expect(await organizer.invokeStrong('tickets.left', { event: 'mine' })).toBe(2);
    } finally {
      for (const c of [alice, bob, anonymous]) c.close();
    }
  });
});
