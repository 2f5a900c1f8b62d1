import { fileURLToPath } from 'node:url';
import { connect, InvalidArguments } from '@creek/client';
import { LocalCluster } from '@creek/server/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import app, { ticketName } from '../src/ticketing/app.js';
import { sellsOnPreliminary } from '../src/ticketing/policy.js';
import type { Purchase, TicketClient } from '../src/ticketing/purchase.js';
import { runSale } from '../src/ticketing/sale.js';

/**
 * The ticketing example against real replica processes running its app: retailers on different
 * replicas, with a little delay between replicas so their preliminary views really disagree.
 * Outcomes only; no timing is asserted.
 */
const APP = fileURLToPath(new URL('../src/ticketing/app.ts', import.meta.url));
const RETAILERS = 4;

let cluster: LocalCluster;
let organizer: TicketClient;
let retailers: TicketClient[];

beforeAll(async () => {
  cluster = await LocalCluster.start({ replicas: 3, app: APP, logLevel: 'error' });
  await cluster.delayBetweenReplicas(5);
  const client = (i: number): TicketClient =>
    connect({ urls: [cluster.url(i % 3), ...cluster.urls], token: cluster.token, app });
  organizer = client(0);
  retailers = Array.from({ length: RETAILERS }, (_, i) => client(i));
}, 60_000);

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
});
