/**
 * The ticketing page, a React app on @creek/react. "Buy" invokes `tickets.buy`; its row follows
 * the Correctable (`useCorrectable`): on the preliminary view the page applies the retailer's
 * threshold rule (policy.ts) — with plenty left, the ticket is handed over at once and confirmed
 * a moment later; with few left, the page waits for the final view. The final view confirms the
 * ticket, gives another one (two buyers were handed the same ticket tentatively), or says none is
 * left. The stock is a live query (`useWatch('tickets.left')`), pushed by the server as it changes.
 *
 * "Rush" buys one ticket through every server at the same moment: concurrent purchases that each
 * server orders before it hears of the others, so their preliminary tickets can collide.
 *
 * State for tests and curious readers: a row (`data-seq`) has `data-state` (sending | queued |
 * reserved | waiting | confirmed | reissued | withdrawn | sold-out | error) and `data-phase`;
 * `data-trail` lists the states it went through; `data-causes` names the ops the replica gave as
 * the reason a ticket handed over tentatively changed. `#stock` has `data-level` (weak | strong).
 *
 * On a cluster that verifies users' tokens (the page server then signs dev users in), the page is
 * signed in as one user, with a picker to sign in as another (new clients: a session is its
 * user's), and lists that user's own tickets, a live query of `tickets.mine` (`#mine`, one `li`
 * per ticket with `data-ticket`). `[data-role=sign-in]` has `data-user` and `data-state`.
 *
 * `import type` for the app: the browser gets the client SDK only, never the server's code.
 */
import { connect, type Correctable, type CreekClient } from '@creek/client';
import { createCreekHooks, useCorrectable } from '@creek/react';
import { useEffect, useRef, useState } from 'react';
import { z } from 'zod';
import { ConnectionBadge } from '../shared/ui/connection-badge.js';
import { mountApp, readPageConfig } from '../shared/ui/mount.js';
import { errorText, phaseOf, type Phase } from '../shared/ui/phase.js';
import { DevSession, SignInPicker } from '../shared/ui/sign-in.js';
import type { Bought, TicketingApp } from './app.js';
import { outcomeOf, sellsOnPreliminary, type Outcome } from './policy.js';

const config = readPageConfig(
  z.object({
    urls: z.array(z.string()).min(1),
    token: z.string(),
    event: z.string(),
    threshold: z.number().int().min(0),
    /** Dev users to sign in as, and whom the page starts as; absent: anonymous clients. */
    signIn: z
      .object({ users: z.array(z.string().min(1)).min(1), user: z.string().min(1) })
      .optional(),
  }),
);
const { signIn } = config;
const { CreekProvider, useWatch, useStatus } = createCreekHooks<TicketingApp>();

/** Who the page is signed in as, and its clients: one per server. */
interface Buyers {
  readonly session: DevSession | null;
  readonly clients: readonly CreekClient<TicketingApp>[];
}

/**
 * One client per server, each preferring its own and failing over to the others; all signed in
 * as `user` (through the page server's dev sign-in), or anonymous. Each keeps to its own server
 * (`nearest: false`): a buyer stands for a region, and on one machine the probed round trips
 * differ by load, not distance, so a nearest-replica move would only put two buyers on one server.
 */
function connectAll(user: string | null): Buyers {
  const session = user === null ? null : new DevSession(user);
  const clients = config.urls.map((url, i) =>
    connect<TicketingApp>({
      urls: [url, ...config.urls.filter((_, j) => j !== i)],
      token: config.token,
      nearest: false,
      offline: true,
      ...(session === null ? {} : { auth: session.token }),
    }),
  );
  return { session, clients };
}

// Made once, outside React (StrictMode mounts twice in development); signing in as someone else
// makes new ones in the event handler.
const initial = connectAll(signIn?.user ?? null);
/** This page's buyers: customer names the app records, never shown. */
const customerPrefix = `web-${Math.random().toString(36).slice(2, 8)}`;

/** A purchase, and what its views said; filled in by a subscription made when it starts. */
interface Purchase {
  readonly seq: number;
  readonly op: Correctable<Bought | null>;
  /** The first preliminary view, on which the sale is decided (undefined: none yet). */
  preliminary?: Bought | null;
  /** Handed over on the preliminary view (above the threshold). */
  early: boolean;
  outcome?: Outcome;
  /** The states it went through, for the eye and for tests. */
  trail: string[];
}

function buy(client: CreekClient<TicketingApp>, seq: number): Purchase {
  const op = client.invoke('tickets.buy', {
    event: config.event,
    customer: `${customerPrefix}-${seq}`,
  });
  const p: Purchase = { seq, op, early: false, trail: [] };
  const step = (s: string): void => {
    if (p.trail.at(-1) !== s) p.trail.push(s);
  };
  op.subscribe({
    onQueued: (queued) => queued && step('queued'),
    onUpdate: (view) => {
      if (p.preliminary === undefined) {
        p.preliminary = view;
        p.early = sellsOnPreliminary(view, config.threshold);
      }
      step(p.early ? 'reserved' : 'waiting');
    },
    onFinal: (final) => {
      p.outcome = outcomeOf(p.early ? 'preliminary' : 'final', p.preliminary, final);
      step(stateOf(p.outcome));
    },
    onError: () => step('error'),
  });
  return p;
}

const stateOf = (o: Outcome): string => (o === 'sold' ? 'confirmed' : o);

function App() {
  const [buyers, setBuyers] = useState<Buyers>(initial);
  const [purchases, setPurchases] = useState<readonly Purchase[]>([]);
  const seq = useRef(0);
  const { clients, session } = buyers;
  // Clients of an earlier user are closed once the components have let go of them.
  const made = useRef(new Set(initial.clients));
  useEffect(() => {
    for (const c of made.current)
      if (!clients.includes(c)) {
        c.close();
        made.current.delete(c);
      }
    for (const c of clients) made.current.add(c);
  }, [clients]);
  const signInAs = (user: string): void => {
    if (session?.user !== user) setBuyers(connectAll(user));
  };
  const start = (targets: readonly CreekClient<TicketingApp>[]): void => {
    const made = targets.map((c) => buy(c, ++seq.current));
    setPurchases((ps) => [...made.reverse(), ...ps]);
  };
  return (
    <CreekProvider key={session?.user ?? ''} client={clients[0]!}>
      <header>
        <h1>Creek Tickets</h1>
        <Connection />
      </header>
      {session !== null && signIn !== undefined && (
        <p>
          <SignInPicker users={signIn.users} session={session} onPick={signInAs} />
        </p>
      )}
      <Stock />
      <p>
        <button id="buy" onClick={() => start(clients.slice(0, 1))}>
          Buy a ticket
        </button>{' '}
        <button
          id="rush"
          title="one purchase from each region at the same moment"
          onClick={() => start(clients)}
        >
          Rush: {clients.length} buyers in different regions at once
        </button>
      </p>
      <p className="hint">
        While more than {config.threshold} tickets are left, your ticket is yours at once and
        confirmed a moment later. When two buyers far apart are handed the same ticket at the same
        moment, the confirmation gives one of them another ticket, or says none is left. With{' '}
        {config.threshold} or fewer left, we wait for the confirmation before handing a ticket over.
      </p>
      <ol id="purchases">
        {purchases.map((p) => (
          <PurchaseRow key={p.seq} purchase={p} />
        ))}
      </ol>
      {session !== null && <MyTickets user={session.user} />}
      {session !== null && <Receipt client={clients[0]!} session={session} />}
    </CreekProvider>
  );
}

/**
 * A receipt the page server renders (ticketing/receipt.ts), as a server-rendered page would: the
 * page sends the user's token and its client's context token, and the server's client reads after
 * it, so the receipt lists the ticket just bought even where the server reads at another replica.
 */
function Receipt({ client, session }: { client: CreekClient<TicketingApp>; session: DevSession }) {
  const [receipt, setReceipt] = useState<{ html?: string; error?: string } | null>(null);
  const fetchReceipt = async (): Promise<void> => {
    setReceipt(null);
    try {
      const res = await fetch('/receipt', {
        cache: 'no-store',
        headers: {
          authorization: `Bearer ${await session.token()}`,
          'x-creek-context': await client.context(),
        },
      });
      const body = await res.text();
      setReceipt(res.ok ? { html: body } : { error: body });
    } catch (err) {
      setReceipt({ error: err instanceof Error ? err.message : String(err) });
    }
  };
  return (
    <section>
      <p>
        <button id="receipt-button" onClick={() => void fetchReceipt()}>
          Receipt from the server
        </button>
      </p>
      {receipt?.error !== undefined && <p className="error">{receipt.error}</p>}
      {receipt?.html !== undefined && (
        // The server escapes every value it puts in (receipt.ts).
        <div id="receipt" dangerouslySetInnerHTML={{ __html: receipt.html }} />
      )}
    </section>
  );
}

function Connection() {
  return <ConnectionBadge status={useStatus()} />;
}

function Stock() {
  const left = useWatch('tickets.left', { event: config.event });
  const confirmed = left.level === 'strong';
  return (
    <p>
      <strong>{config.event}</strong>:{' '}
      <strong id="stock" data-level={left.level ?? ''}>
        {left.error !== undefined ? errorText(left.error) : (left.value ?? '…')}
      </strong>{' '}
      tickets left
      {left.value !== undefined && !confirmed && <span className="tag">updating</span>}
    </p>
  );
}

/** The signed-in user's own tickets for this event, pushed by the server as they change. */
function MyTickets({ user }: { user: string }) {
  const mine = useWatch('tickets.mine', { event: config.event });
  return (
    <section>
      <h2>
        {user}'s tickets{' '}
        {mine.value !== undefined && mine.level !== 'strong' && (
          <span className="tag">updating</span>
        )}
      </h2>
      {mine.error !== undefined ? (
        <p className="error">{errorText(mine.error)}</p>
      ) : mine.value === undefined ? (
        <p>…</p>
      ) : mine.value.length === 0 ? (
        <p id="mine" data-level={mine.level ?? ''} className="hint">
          None yet.
        </p>
      ) : (
        <ul id="mine" data-level={mine.level ?? ''}>
          {mine.value.map((t) => (
            <li key={t.ticket} data-ticket={t.ticket}>
              Ticket {t.ticket}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function PurchaseRow({ purchase: p }: { purchase: Purchase }) {
  const s = useCorrectable(p.op);
  // The replica's word for why the ticket first handed over changed: the purchases that came first.
  const causes = s.correction?.causes ?? [];
  const { text, state, phase, refused } = describe(p, s.error, phaseOf(s), causes.length > 0);
  return (
    <li
      data-seq={p.seq}
      data-state={state}
      data-causes={causes.length === 0 ? undefined : causes.map((c) => c.op).join(' ')}
      data-phase={phase}
      data-trail={p.trail.join(' ')}
      className={`phase phase-${phase}${refused ? ' refused' : ''}`}
    >
      {text}
    </li>
  );
}

function describe(
  p: Purchase,
  error: Error | undefined,
  phase: Phase,
  /** The replica named the purchases that came first (product copy names no ids). */
  explained: boolean,
): { text: string; state: string; phase: Phase; refused?: boolean } {
  const other = explained
    ? 'went to another buyer, whose purchase came first'
    : 'went to another buyer at the same moment';
  if (error !== undefined) return { text: errorText(error), state: 'error', phase };
  if (phase === 'queued')
    return { text: 'Waiting for the connection: sent once it is back', state: 'queued', phase };
  const first = p.preliminary;
  if (p.outcome !== undefined) {
    const final = p.op.latest()?.value ?? null;
    switch (p.outcome) {
      case 'confirmed':
      case 'sold':
        return { text: `Ticket ${final?.ticket} · confirmed`, state: 'confirmed', phase: 'stable' };
      case 'reissued':
        return {
          text: `Ticket ${final?.ticket} · confirmed (${first?.ticket} ${other})`,
          state: 'reissued',
          phase: 'stable',
        };
      case 'withdrawn':
        return {
          text: `Sorry: ${first?.ticket} ${other}, and none are left`,
          state: 'withdrawn',
          phase: 'stable',
          refused: true,
        };
      case 'sold-out':
        return { text: 'Sold out', state: 'sold-out', phase: 'stable', refused: true };
    }
  }
  if (first === undefined) return { text: 'Buying…', state: 'sending', phase: 'sending' };
  if (first === null)
    return { text: 'Looks sold out: checking…', state: 'waiting', phase: 'tentative' };
  return p.early
    ? { text: `Ticket ${first.ticket} · yours, confirming…`, state: 'reserved', phase: 'tentative' }
    : {
        text: `Ticket ${first.ticket} held · few left: waiting for confirmation`,
        state: 'waiting',
        phase: 'tentative',
      };
}

mountApp(<App />);
