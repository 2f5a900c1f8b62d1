/**
 * The bank's web page, a React app on @creek/react: one shared account seen from two branches,
 * each a Creek client of its own server. The balance is a live query (`useWatch`): the server
 * pushes it whenever it changes, first as this server sees it, then confirmed. Every operation is
 * a row that follows its Correctable (`useCorrectable`) through its phases — waiting offline,
 * sending, tentative, confirmed, or failed — each styled apart (shared/ui/phase.ts).
 *
 * The clients are made with `offline: true`: an operation invoked while no server answers waits
 * in the client, is sent once when one does, and the page says so.
 *
 * On a cluster that verifies users' tokens (the page server then signs dev users in), each branch
 * is signed in as its own user, with a picker to sign in as another (a new client: a session is
 * its user's). The account is one user's: only that user withdraws from it (anyone else's
 * withdrawal is declined, saying whose it is), anyone deposits, and only an admin adds interest.
 *
 * State is mirrored in data attributes, for tests and curious readers:
 * - a branch (`data-branch`): `data-level` of the balance shown (weak | strong), `data-ready`
 *   (yes once its server has confirmed the account exists), its `[data-role=balance]`, and its
 *   `[data-role=sign-in]` with `data-user` (whose token it holds) and `data-state`;
 * - an activity row (`data-seq`): `data-kind` (deposit | withdraw | interest), `data-phase`
 *   (queued | sending | tentative | stable | error), `data-outcome` (accepted | refused),
 *   `data-user` (who made it, signed in),
 *   `data-tentative` (a withdrawal's first tentative outcome), `data-revised` (yes when the final
 *   outcome differs from it), `data-causes` (the ops the replica named as the correction's
 *   causes), `data-views` (levels of the views, in arrival order) and
 *   `data-offline` (yes when it waited offline), `data-context` (yes when made in the customer's
 *   context);
 * - a branch's `[data-role=context-balance]`: the balance read in the customer's context, with
 *   `data-state` (reading | shown | error).
 *
 * The branches share a context for the customer (`client.joinContext`): a deposit made in it at
 * one branch (the branch's "in the customer's context" box ticked) is acknowledged once the context
 * has taken it in, and a balance read in it at the other branch then includes it, even while that
 * branch's server has not heard of the deposit yet (the read waits for it). Ops outside the
 * context cost no more than before; one in it costs two strong round trips more.
 */
import {
  connect,
  Forbidden,
  type Correctable,
  type CorrectionCause,
  type CreekClient,
  type JoinedContext,
} from '@creek/client';
import { createCreekHooks, useCorrectable } from '@creek/react';
import { useEffect, useRef, useState } from 'react';
import { ConnectionBadge } from '../shared/ui/connection-badge.js';
import { mountApp, readPageConfig } from '../shared/ui/mount.js';
import { errorText, phaseOf } from '../shared/ui/phase.js';
import { DevSession, SignInPicker } from '../shared/ui/sign-in.js';
// Types only: no server code in the browser bundle.
import type { BankApp, Opened } from './app.js';
import { Bank, type WithdrawResult } from './bank.js';
import { formatCents, interestOn, parseDollars } from './money.js';
import { PageConfigSchema, type PageConfig } from './page-config.js';

const config = readPageConfig(PageConfigSchema);
const { account, rateBps, signIn } = config;
const { CreekProvider, useWatch, useStatus } = createCreekHooks<BankApp>();

interface BranchClient {
  readonly name: string;
  /** Who the branch is signed in as; null: anonymous (the cluster verifies no tokens). */
  readonly session: DevSession | null;
  readonly client: CreekClient<BankApp>;
  readonly bank: Bank;
  /** The customer's context, which both branches join. */
  readonly customer: JoinedContext<BankApp>;
}

/** A branch's client, signed in as `user` (through the page server's dev sign-in) or anonymous. */
function connectBranch(b: PageConfig['branches'][number], user: string | null): BranchClient {
  const session = user === null ? null : new DevSession(user);
  const client = connect<BankApp>({
    urls: b.urls,
    token: config.token,
    // The branch's server is the first of its URLs (its region's); on one machine, probed round
    // trips differ by load, not distance, and would move a branch to the other's server.
    nearest: false,
    offline: true,
    connectTimeoutMs: config.offlineAfterMs,
    ...(session === null ? {} : { auth: session.token }),
  });
  const customer = client.joinContext(`customer:${account}`);
  return { name: b.name, session, client, bank: new Bank(client), customer };
}

// The first clients are made once, outside React: StrictMode mounts components twice in
// development, and a client is a connection, not component state. Signing in as someone else
// makes a new one, in the event handler.
const initial: readonly BranchClient[] = config.branches.map((b) =>
  connectBranch(b, signIn === undefined ? null : (b.user ?? signIn.users[0]!)),
);

/**
 * Deposits need the account: opened once (strong, idempotent) before any branch shows it, by the
 * first branch, for the owner the page server names (a user may open an account for itself only,
 * so the first branch starts signed in as the owner).
 */
const opening: Promise<Opened> = initial[0]!.bank.open(
  account,
  signIn === undefined ? {} : { owner: signIn.owner },
);

type Kind = 'deposit' | 'withdraw' | 'interest';

/** What a row remembers of its op's views beyond the latest (which useCorrectable gives). */
interface Trail {
  views: string[];
  firstTentative?: 'accepted' | 'refused';
  offline: boolean;
}

interface Entry {
  readonly seq: number;
  readonly branch: string;
  /** Who made it (signed in), or null. */
  readonly user: string | null;
  readonly kind: Kind;
  readonly label: string;
  readonly op: Correctable<number> | Correctable<WithdrawResult>;
  readonly trail: Trail;
  /** Made in the customer's context. */
  readonly inContext: boolean;
}

const outcomeOf = (r: WithdrawResult): 'accepted' | 'refused' => (r.ok ? 'accepted' : 'refused');

function describeWithdrawal(r: WithdrawResult): string {
  if (r.ok) return `Approved · balance ${formatCents(r.balance)}`;
  if (r.reason === 'forbidden')
    return r.owner === null
      ? 'Declined: this account has no owner to withdraw from it'
      : `Declined: only ${r.owner}, whose account it is, withdraws from it`;
  return `Declined: ${r.reason} (short by ${formatCents(r.shortBy)}) · balance ${formatCents(r.balance)}`;
}

/** A correction's cause in words: "a withdrawal elsewhere (r0#12)". */
function describeCause(c: CorrectionCause): string {
  const what =
    c.op === 'bank.withdraw'
      ? 'a withdrawal'
      : c.op === 'bank.deposit'
        ? 'a deposit'
        : c.op === 'bank.interest'
          ? 'interest'
          : c.op;
  return `${what} elsewhere (${c.id})`;
}

/** Records the views as they come (a render may skip one that is followed at once by the next). */
function track(op: Entry['op']): Trail {
  const trail: Trail = { views: [], offline: op.queued };
  (op as Correctable<unknown>).subscribe({
    onQueued: (queued) => {
      if (queued) trail.offline = true;
    },
    onUpdate: (value, view) => {
      trail.views.push(view.level);
      if (typeof value === 'object' && value !== null)
        trail.firstTentative ??= outcomeOf(value as WithdrawResult);
    },
    onFinal: (_value, view) => {
      trail.views.push(view.level);
    },
  });
  return trail;
}

function App() {
  const [branches, setBranches] = useState<readonly BranchClient[]>(initial);
  const [entries, setEntries] = useState<readonly Entry[]>([]);
  const [amounts, setAmounts] = useState(() => initial.map(() => '10.00'));
  /** Per branch: whether its deposits go in the customer's context. */
  const [inContext, setInContext] = useState(() => initial.map(() => false));
  const [opened, setOpened] = useState<Error | Opened | null>(null);
  const [readyBranches, setReadyBranches] = useState<ReadonlySet<number>>(new Set());
  /** Ops that waited offline, and how many of them are now in the agreed order. */
  const [offline, setOffline] = useState({ waiting: 0, applied: 0 });
  const inputs = useRef<(HTMLInputElement | null)[]>([]);
  const seq = useRef(0);

  useEffect(() => {
    opening.then(
      (o) => setOpened(o),
      (e: unknown) => setOpened(e instanceof Error ? e : new Error(String(e))),
    );
  }, []);

  function add(i: number, kind: Kind, label: string, op: Entry['op'], context = false): void {
    const trail = track(op);
    const { name, session } = branches[i]!;
    const user = session?.user ?? null;
    const entry: Entry = {
      ...{ seq: ++seq.current, branch: name, user, kind, label, op, trail },
      inContext: context,
    };
    setEntries((es) => [entry, ...es]);
    // The page's one summary of offline work: how many waited, and how many are now applied.
    let counted = false;
    const count = (queued: boolean): void => {
      if (!queued || counted) return;
      counted = true;
      setOffline((o) => ({ ...o, waiting: o.waiting + 1 }));
      op.committed().then(
        () => setOffline((o) => ({ waiting: o.waiting - 1, applied: o.applied + 1 })),
        () => setOffline((o) => ({ ...o, waiting: o.waiting - 1 })),
      );
    };
    count(op.queued);
    (op as Correctable<unknown>).subscribe({ onQueued: count });
  }

  /** The amount in a branch's box, or null (and the box marked invalid) when it is not money. */
  function amountOf(i: number): number | null {
    const cents = parseDollars(amounts[i]!);
    const ok = cents !== null && cents > 0;
    const input = inputs.current[i];
    input?.setCustomValidity(ok ? '' : 'an amount of dollars, like 12.50');
    input?.reportValidity();
    return ok ? cents : null;
  }

  function deposit(i: number): void {
    const cents = amountOf(i);
    if (cents === null) return;
    const { bank, customer } = branches[i]!;
    if (!inContext[i])
      return add(i, 'deposit', `Deposit ${formatCents(cents)}`, bank.deposit(account, cents));
    add(
      i,
      'deposit',
      `Deposit ${formatCents(cents)} in the customer's context`,
      customer.invokeWeak('bank.deposit', { account, amount: cents }),
      true,
    );
  }

  function withdraw(i: number): void {
    const cents = amountOf(i);
    if (cents === null) return;
    add(
      i,
      'withdraw',
      `Withdraw ${formatCents(cents)}`,
      branches[i]!.bank.withdraw(account, cents),
    );
  }

  /**
   * Interest as a generator and a shadow deposit: read the balance this branch sees, compute the
   * interest on it here, and deposit that fixed amount (an addition commutes with every other
   * deposit and withdrawal, so it may be weak; see Bank.accrueInterest).
   */
  function interest(i: number): void {
    const { bank } = branches[i]!;
    bank.localBalance(account).then(
      (seen) => {
        const cents = interestOn(seen, rateBps);
        if (cents === 0) return;
        add(
          i,
          'interest',
          `Interest ${rateBps / 100} % on ${formatCents(seen)}: +${formatCents(cents)}`,
          bank.interest(account, cents),
        );
      },
      () => undefined, // the balance on screen already says the server is out of reach
    );
  }

  /**
   * Signs branch i in as `user`: a new client (a session is its user's). The old one is closed;
   * its ops still in flight end as closed, and their rows say so.
   */
  function signInAs(i: number, user: string): void {
    if (branches[i]!.session?.user === user) return;
    const next = connectBranch(config.branches[i]!, user);
    setBranches((bs) => bs.map((b, j) => (j === i ? next : b)));
    setReadyBranches((s) => new Set([...s].filter((j) => j !== i)));
  }

  // A client no branch uses any more is closed once the cards have let go of it (after the
  // render that swapped it out: closing it first would fail their live queries on screen).
  const made = useRef(new Set(initial.map((b) => b.client)));
  useEffect(() => {
    for (const c of made.current)
      if (!branches.some((b) => b.client === c)) {
        c.close();
        made.current.delete(c);
      }
    for (const b of branches) made.current.add(b.client);
  }, [branches]);

  const markReady = (i: number): void =>
    setReadyBranches((s) => (s.has(i) ? s : new Set([...s, i])));
  const everyReady = readyBranches.size === branches.length;
  const owner = opened === null || opened instanceof Error ? undefined : opened.owner;

  return (
    <>
      <header>
        <h1>Creek Bank</h1>
      </header>
      <p>
        One shared account, two branches in different regions, each served by its nearest server. A{' '}
        <b>deposit</b> is credited at once by the branch's server and synced to the others in the
        background. A <b>withdrawal</b> is approved tentatively at once, then confirmed when the
        servers agree on its place among all operations: cash is handed out on the confirmation
        only, so two branches can never overdraw the account together. Operations made while offline
        wait here and are sent when the connection is back, once each.
      </p>
      {signIn !== undefined && (
        <p data-role="rules">
          {owner === undefined ? 'The account' : `The account is ${owner}'s`}: only{' '}
          {owner ?? 'its owner'} withdraws from it, anyone signed in deposits, and only an admin
          adds interest. Each branch is signed in as its own user; sign both in as{' '}
          {owner ?? 'the owner'} to race two withdrawals.
        </p>
      )}
      {opened instanceof Error && (
        <p className="phase phase-error">Cannot open the account: {errorText(opened)}</p>
      )}
      <OfflineSummary {...offline} />
      <div id="branches">
        {branches.map((b, i) => (
          // Keyed by its user too: signing in as someone else starts the card afresh.
          <CreekProvider key={`${i}:${b.session?.user ?? ''}`} client={b.client}>
            <BranchCard
              index={i}
              name={b.name}
              session={b.session}
              onSignIn={(user) => signInAs(i, user)}
              opened={opened !== null && !(opened instanceof Error)}
              amount={amounts[i]!}
              inputRef={(el) => {
                inputs.current[i] = el;
              }}
              onAmount={(v) => setAmounts((a) => a.map((x, j) => (j === i ? v : x)))}
              onReady={() => markReady(i)}
              onDeposit={() => deposit(i)}
              onWithdraw={() => withdraw(i)}
              onInterest={() => interest(i)}
              customer={b.customer}
              inContext={inContext[i]!}
              onInContext={(on) => setInContext((c) => c.map((x, j) => (j === i ? on : x)))}
            />
          </CreekProvider>
        ))}
      </div>
      <p>
        <button
          id="race"
          disabled={!everyReady}
          onClick={() => branches.forEach((_, i) => withdraw(i))}
        >
          Withdraw at both branches at once
        </button>{' '}
        <span className="hint">each branch withdraws the amount in its own box</span>
      </p>
      <h2>Activity</h2>
      <table id="log">
        <thead>
          <tr>
            <th>Branch</th>
            <th>Operation</th>
            <th>Status</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((e) => (
            <Row key={e.seq} entry={e} />
          ))}
        </tbody>
      </table>
    </>
  );
}

function OfflineSummary({ waiting, applied }: { waiting: number; applied: number }) {
  if (waiting > 0)
    return (
      <p className="notice phase-queued" data-role="offline-summary" data-state="waiting">
        {waiting} {waiting === 1 ? 'operation waits' : 'operations wait'} for the connection.
      </p>
    );
  if (applied === 0) return null;
  return (
    <p className="notice" data-role="offline-summary" data-state="applied">
      Back online:{' '}
      {applied === 1
        ? '1 operation made while offline was sent and applied once.'
        : `${applied} operations made while offline were sent and applied, each once.`}
    </p>
  );
}

interface BranchCardProps {
  readonly index: number;
  readonly name: string;
  readonly session: DevSession | null;
  onSignIn(user: string): void;
  readonly opened: boolean;
  readonly amount: string;
  inputRef(el: HTMLInputElement | null): void;
  onAmount(value: string): void;
  onReady(): void;
  onDeposit(): void;
  onWithdraw(): void;
  onInterest(): void;
  readonly customer: JoinedContext<BankApp>;
  readonly inContext: boolean;
  onInContext(on: boolean): void;
}

function BranchCard(p: BranchCardProps) {
  const status = useStatus();
  const balance = useWatch('bank.balance', { account }, { skip: !p.opened });
  const confirmed = balance.level === 'strong';
  // Ready once this branch's server confirms the account: a deposit there cannot miss it then.
  const [ready, setReady] = useState(false);
  useEffect(() => {
    if (confirmed && !ready) {
      setReady(true);
      p.onReady();
    }
  }, [confirmed, ready, p]);
  const phase =
    balance.error !== undefined
      ? 'error'
      : confirmed
        ? 'stable'
        : balance.level
          ? 'tentative'
          : 'sending';
  return (
    <section
      className="branch"
      data-branch={p.index}
      data-level={balance.level ?? ''}
      data-ready={ready ? 'yes' : 'no'}
    >
      <h2>
        {p.name} <ConnectionBadge status={status} />
      </h2>
      {p.session !== null && signIn !== undefined && (
        <p>
          <SignInPicker users={signIn.users} session={p.session} onPick={p.onSignIn} />
        </p>
      )}
      <p className="balance">
        Balance{' '}
        <span className={`phase phase-${phase}`}>
          <span className="value" data-role="balance">
            {balance.error !== undefined
              ? errorText(balance.error)
              : balance.value === undefined
                ? '…'
                : formatCents(balance.value)}
          </span>
          <span className="tag">
            {confirmed
              ? 'confirmed'
              : balance.level !== undefined
                ? 'includes unconfirmed changes'
                : ''}
          </span>
        </span>
      </p>
      <p>
        <label>
          Amount ($){' '}
          <input
            ref={p.inputRef}
            data-role="amount"
            value={p.amount}
            inputMode="decimal"
            onChange={(e) => {
              e.target.setCustomValidity('');
              p.onAmount(e.target.value);
            }}
          />
        </label>
      </p>
      <p>
        <button data-action="deposit" disabled={!ready} onClick={p.onDeposit}>
          Deposit
        </button>{' '}
        <button data-action="withdraw" disabled={!ready} onClick={p.onWithdraw}>
          Withdraw
        </button>{' '}
        <button data-action="interest" disabled={!ready} onClick={p.onInterest}>
          Add interest ({rateBps / 100} %{signIn === undefined ? '' : ', admins only'})
        </button>
      </p>
      <p>
        <label>
          <input
            type="checkbox"
            data-role="in-context"
            checked={p.inContext}
            onChange={(e) => p.onInContext(e.target.checked)}
          />{' '}
          Deposit in the customer's context
        </label>
      </p>
      <ContextBalance customer={p.customer} ready={ready} />
    </section>
  );
}

/**
 * The balance read in the customer's context: after every op the context acknowledged, at either
 * branch, whether or not this branch's server has heard of it yet (the read waits until it has).
 */
function ContextBalance({ customer, ready }: { customer: JoinedContext<BankApp>; ready: boolean }) {
  const [read, setRead] = useState<
    | { state: 'idle' }
    | { state: 'reading' }
    | { state: 'shown'; cents: number }
    | { state: 'error'; error: Error }
  >({ state: 'idle' });
  function check(): void {
    setRead({ state: 'reading' });
    customer.invokeWeak('bank.balance', { account }).then(
      (cents) => setRead({ state: 'shown', cents }),
      (e: unknown) =>
        setRead({ state: 'error', error: e instanceof Error ? e : new Error(String(e)) }),
    );
  }
  return (
    <p>
      <button data-action="context-balance" disabled={!ready} onClick={check}>
        Balance in the customer's context
      </button>{' '}
      {read.state !== 'idle' && (
        <span data-role="context-balance" data-state={read.state}>
          {read.state === 'reading'
            ? 'reading after the context…'
            : read.state === 'shown'
              ? formatCents(read.cents)
              : errorText(read.error)}
        </span>
      )}
    </p>
  );
}

function Row({ entry }: { entry: Entry }) {
  const s = useCorrectable<number | WithdrawResult>(
    entry.op as Correctable<number | WithdrawResult>,
  );
  const phase = phaseOf(s);
  const { trail } = entry;
  let text: string;
  let outcome: 'accepted' | 'refused' | undefined;
  if (s.error instanceof Forbidden && entry.kind === 'interest') {
    // Refused by the cluster before it was ordered: a decline, not a failure of the system.
    outcome = 'refused';
    text = 'Declined: only an admin adds interest';
  } else if (s.error !== undefined) text = errorText(s.error);
  else if (s.queued) text = 'Waiting for the connection: sent once it is back';
  else if (s.value === undefined) text = 'Sending…';
  else if (typeof s.value === 'number') {
    // A deposit (or interest): its one answer is this server's; it is synced afterwards.
    outcome = 'accepted';
    text = `Credited · balance ${formatCents(s.value)} at this branch · ${s.committed ? 'synced' : 'syncing…'}`;
  } else if (phase === 'stable') {
    outcome = outcomeOf(s.value);
    text = describeWithdrawal(s.value);
  } else text = `${describeWithdrawal(s.value)} · waiting for confirmation`;
  // Did the confirmation say what the branch was first told, or revise it?
  const revised =
    outcome !== undefined && entry.kind === 'withdraw' && trail.firstTentative !== undefined
      ? trail.firstTentative !== outcome
      : undefined;
  // The replica says why an answer shown was corrected: the ops ordered ahead of it unseen.
  const causes = s.correction?.causes ?? [];
  if (revised === true)
    text +=
      causes.length === 0
        ? ' (first approved tentatively: another withdrawal came first)'
        : ` (first approved tentatively: ${causes.map(describeCause).join(' and ')} came first)`;
  return (
    <tr
      data-seq={entry.seq}
      data-kind={entry.kind}
      data-phase={phase}
      data-outcome={outcome}
      data-tentative={trail.firstTentative}
      data-revised={revised === undefined ? undefined : revised ? 'yes' : 'no'}
      data-causes={causes.length === 0 ? undefined : causes.map((c) => c.op).join(' ')}
      data-views={trail.views.join(' ')}
      data-offline={trail.offline ? 'yes' : undefined}
      data-user={entry.user ?? undefined}
      data-context={entry.inContext ? 'yes' : undefined}
    >
      <td>
        {entry.branch}
        {entry.user !== null && ` · ${entry.user}`}
      </td>
      <td>{entry.label}</td>
      <td
        data-cell="status"
        className={`phase phase-${phase}${outcome === 'refused' ? ' refused' : ''}`}
      >
        {text}
        {trail.offline && phase !== 'queued' && <span className="tag">made offline</span>}
      </td>
    </tr>
  );
}

mountApp(<App />);
