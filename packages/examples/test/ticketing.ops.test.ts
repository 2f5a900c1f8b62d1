import { checkAccess } from '@creek/app';
import { describe, expect, it } from 'vitest';
import app, { type Bought, type Held } from '../src/ticketing/app.js';
import { MapTx, runOp, user } from './support/map-tx.js';

/**
 * The ticketing ops' rules of who may do what, executed serially: each buyer's tickets are listed
 * under the buyer, and `tickets.mine` reads the caller's list only, whatever its arguments say.
 */
const alice = user('alice');
const bob = user('bob');
const organizer = user('admin', { role: 'admin' });
const run = (tx: MapTx, name: string, args: unknown): unknown => runOp(app, tx, name, args);
const mine = (tx: MapTx, args: unknown = {}): Held[] => run(tx, 'tickets.mine', args) as Held[];

function stocked(events: Record<string, number>): MapTx {
  const tx = new MapTx().as(organizer);
  for (const [event, count] of Object.entries(events)) run(tx, 'tickets.stock', { event, count });
  return tx;
}

describe("a buyer's own tickets", () => {
  it('lists what each user bought, and only that', () => {
    const tx = stocked({ gig: 10, play: 5 });
    const buy = (event: string, customer: string): string =>
      (run(tx, 'tickets.buy', { event, customer }) as Bought).ticket;
    tx.as(alice);
    const a1 = buy('gig', 'Alice');
    const a2 = buy('play', 'Alice');
    tx.as(bob);
    const b1 = buy('gig', 'Bob');
    tx.as(alice);
    const a3 = buy('gig', 'Alice');

    expect(mine(tx.as(alice))).toEqual([
      { event: 'gig', ticket: a1 },
      { event: 'gig', ticket: a3 },
      { event: 'play', ticket: a2 },
    ]);
    expect(mine(tx.as(alice), { event: 'play' })).toEqual([{ event: 'play', ticket: a2 }]);
    expect(mine(tx.as(bob))).toEqual([{ event: 'gig', ticket: b1 }]);
    expect(mine(tx.as(bob), { event: 'play' })).toEqual([]);
    expect(mine(tx.as(user('carol')))).toEqual([]);
  });

  it("never shows another user's tickets, whatever the arguments name", () => {
    const tx = stocked({ gig: 10 });
    run(tx.as(bob), 'tickets.buy', { event: 'gig', customer: 'Bob' });
    // Unknown arguments are dropped by the schema: there is no way to name whose list to read.
    for (const args of [{ user: 'bob' }, { owner: 'bob', event: 'gig' }, { sub: 'bob' }])
      expect(mine(tx.as(alice), args)).toEqual([]);
    expect(() => mine(tx.as(alice), { event: '../bob' })).toThrow(/letters, digits/);
  });

  it("keeps users whose ids share a beginning apart, '/' included", () => {
    const tx = stocked({ gig: 10 });
    const [a, aSlash, ab] = [user('a'), user('a/gig'), user('ab')];
    run(tx.as(aSlash), 'tickets.buy', { event: 'gig', customer: 'x' });
    run(tx.as(ab), 'tickets.buy', { event: 'gig', customer: 'y' });
    expect(mine(tx.as(a))).toEqual([]);
    expect(mine(tx.as(a), { event: 'gig' })).toEqual([]);
    expect(mine(tx.as(aSlash))).toEqual([{ event: 'gig', ticket: 'T0001' }]);
    expect(mine(tx.as(ab))).toEqual([{ event: 'gig', ticket: 'T0002' }]);
  });

  it('asks an anonymous caller to sign in, and lists nothing for an anonymous purchase', () => {
    const tx = stocked({ gig: 10 });
    run(tx.as(null), 'tickets.buy', { event: 'gig', customer: 'walk-in' });
    expect(() => mine(tx.as(null))).toThrow(/sign in to see yours/);
    // The sale is recorded all the same, for the organizer's audit.
    expect(run(tx.as(organizer), 'tickets.sales', { event: 'gig' })).toEqual([
      { ticket: 'T0001', customer: 'walk-in' },
    ]);
  });
});

describe('who may call which ticketing op, once the cluster verifies users', () => {
  it('anyone sees the stock; signed-in users buy and list theirs; the organizer stocks and audits', () => {
    expect(checkAccess(app, 'tickets.left', null)).toBeNull();
    for (const name of ['tickets.buy', 'tickets.mine', 'tickets.stock', 'tickets.sales'])
      expect(checkAccess(app, name, null)?.code, name).toBe('unauthorized');
    for (const name of ['tickets.left', 'tickets.buy', 'tickets.mine']) {
      expect(checkAccess(app, name, alice), name).toBeNull();
      expect(checkAccess(app, name, organizer), name).toBeNull();
    }
    // Another user's purchases (customer names) are in the sales: the organizer's alone.
    for (const name of ['tickets.stock', 'tickets.sales']) {
      expect(checkAccess(app, name, alice), name).toMatchObject({ code: 'forbidden' });
      expect(checkAccess(app, name, organizer), name).toBeNull();
    }
    // The built-in queue holds the stock: closed to end users, or anyone could take tickets.
    for (const name of ['queue.dequeue', 'queue.enqueue', 'kv.put'])
      expect(checkAccess(app, name, organizer)?.code, name).toBe('forbidden');
  });
});
