import { builtins, defineApp, op, type StateReader, type User } from '@creek/app';
import { z } from 'zod';

/**
 * The ticketing app (Correctables §4.3, Listing 5): an event's ticket stock is a FIFO queue that
 * organizers fill and retailers drain. A queue, not a counter in a key, because dequeue serializes
 * access to the stock, which is what rules out overselling in the final (stable) state.
 *
 * The ops reuse the built-in queue (`queue.enqueue` / `queue.dequeue` run inside our own ops), so
 * `queue.size {queue: 'tickets/<event>'}` and friends see the same stock. Each sale is also
 * recorded under `ticketing/<event>/sale/<ticket>` so the final state can be audited on the server's
 * own committed data, not only on what clients were told.
 *
 * Who may do what, once the cluster verifies users' tokens: anyone, signed in or not, sees how
 * many tickets are left; any signed-in user buys, and sees the tickets they bought (`tickets.mine`,
 * scoped by `tx.user`: no argument names whose); the organizer (a user with `role: 'admin'`)
 * stocks tickets and reads every sale. Without verified tokens every caller is anonymous, every op
 * is open, and nobody has tickets of their own.
 *
 * `tickets.stock` and `tickets.buy` must be strong: `creek check --app` shows two concurrent
 * purchases selling the last ticket to two customers, and two concurrent stockings writing the
 * same queue positions, which breaks the invariants at the end.
 *
 * This module is the `--app` of the replicas and the type of the client (`connect<typeof app>`).
 */

/** Event names become key prefixes: no '/', so one event's keys never fall under another's. */
const EventSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1–64 letters, digits, "_" or "-"');

export const queueOf = (event: string): string => `tickets/${event}`;
const salePrefix = (event: string): string => `ticketing/${event}/sale/`;
const issuedKey = (event: string): string => `ticketing/${event}/issued`;
/**
 * Where a user's tickets are listed: under the user's own prefix, which only `tx.user` builds, so
 * no op reaches another user's list from its arguments. The id is URI-encoded: a '/' in it cannot
 * make one user's prefix fall under another's.
 */
const holderPrefix = (user: User): string => `ticketing/holder/${encodeURIComponent(user.id)}/`;

/** The organizer: the role the dev identity gives its `admin` (and a real provider can). */
export const isOrganizer = (user: User): boolean => user.claims.role === 'admin';

/** One of the caller's tickets, as `tickets.mine` lists them. */
export type Held = { event: string; ticket: string };

/** The name of the event's n-th ticket (from 0): T0001, T0002, … */
export function ticketName(n: number): string {
  return `T${String(n + 1).padStart(4, '0')}`;
}

/** Each event's ticket queue as the state holds it: its head, its tail and how many items. */
function stocks(read: StateReader): { head: number; tail: number; items: number }[] {
  const events = new Map<string, { head: number; tail: number; items: number }>();
  for (const [key, value] of read.scan('~queue/tickets/')) {
    const [event, part] = key.slice('~queue/tickets/'.length).split('/') as [string, string];
    const e = events.get(event) ?? { head: 0, tail: 0, items: 0 };
    if (part === 'head' || part === 'tail') e[part] = value as number;
    else e.items++;
    events.set(event, e);
  }
  return [...events.values()];
}

/** What a purchase returns: the ticket, its queue position and how many were left after it. */
export type Bought = { ticket: string; position: number; remaining: number };

const app = defineApp(
  {
    /** The organizer puts `count` more tickets on sale (one op, so they appear all at once). */
    'tickets.stock': op({
      args: z.object({ event: EventSchema, count: z.number().int().min(1).max(100_000) }),
      access: isOrganizer,
      run: (tx, { event, count }) => {
        const queue = queueOf(event);
        // Our own counter of tickets ever stocked: a restock continues the numbering (T0501, …)
        // instead of reusing the names of tickets already sold.
        const issued = tx.get(issuedKey(event));
        const first = typeof issued === 'number' ? issued : 0;
        for (let i = 0; i < count; i++)
          builtins['queue.enqueue'].run(tx, { queue, item: ticketName(first + i) });
        tx.put(issuedKey(event), first + count);
        return { first, count, stock: builtins['queue.size'].run(tx, { queue }) };
      },
    }),

    /**
     * One purchase: dequeue a ticket and record who bought it; null when sold out. Which ticket a
     * customer gets is irrelevant (no seating, §4.3), so a retailer may sell on the tentative answer.
     * `customer` is the buyer's name on the sale (a retailer sells to many); the ticket is also
     * listed under the signed-in caller, whose `tickets.mine` shows it.
     */
    'tickets.buy': op({
      args: z.object({ event: EventSchema, customer: z.string().min(1).max(100) }),
      run: (tx, { event, customer }): Bought | null => {
        const got = builtins['queue.dequeue'].run(tx, { queue: queueOf(event) });
        if (got === null) return null;
        if (typeof got.item !== 'string')
          throw new Error(`tickets/${event}: item ${got.position} is not a ticket name`);
        tx.put(salePrefix(event) + got.item, customer);
        if (tx.user !== null) tx.put(`${holderPrefix(tx.user)}${event}/${got.item}`, customer);
        return { ticket: got.item, position: got.position, remaining: got.remaining };
      },
    }),

    /** Tickets still in stock: anyone may look, signed in or not. */
    'tickets.left': op({
      args: z.object({ event: EventSchema }),
      readOnly: true,
      public: true,
      run: (tx, { event }) => builtins['queue.size'].run(tx, { queue: queueOf(event) }),
    }),

    /**
     * The caller's own tickets (of one event, or all), in event and ticket order: a live query a
     * page watches. Whose is `tx.user`'s alone, so nobody reads another user's tickets through it.
     */
    'tickets.mine': op({
      args: z.object({ event: EventSchema.optional() }),
      readOnly: true,
      run: (tx, { event }): Held[] => {
        if (tx.user === null)
          throw new Error("tickets.mine lists the signed-in user's tickets: sign in to see yours");
        const prefix = holderPrefix(tx.user);
        return tx.scan(event === undefined ? prefix : `${prefix}${event}/`).map(([key]) => {
          const [ev, ticket] = key.slice(prefix.length).split('/') as [string, string];
          return { event: ev, ticket };
        });
      },
    }),

    /** Every sale of the event, as the state says: ticket → customer, in ticket order. Organizer's. */
    'tickets.sales': op({
      args: z.object({ event: EventSchema }),
      readOnly: true,
      access: isOrganizer,
      run: (tx, { event }) =>
        tx.scan(salePrefix(event)).map(([key, customer]) => ({
          ticket: key.slice(salePrefix(event).length),
          customer: typeof customer === 'string' ? customer : JSON.stringify(customer),
        })),
    }),
  },
  {
    invariants: {
      /** Never more tickets sold than stocked: a queue's head never passes its tail. */
      'no event sells more tickets than it stocked': (read) =>
        stocks(read).every(({ head, tail }) => head <= tail),
      /** Every ticket between head and tail is in stock: none lost, none overwritten. */
      'every ticket in stock is in the queue': (read) =>
        stocks(read).every(({ head, tail, items }) => items === Math.max(0, tail - head)),
    },
  },
);

export default app;
export type TicketingApp = typeof app;
