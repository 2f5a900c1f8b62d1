/**
 * The bank's web page (browser script, bundled by the page server). Each branch is a Creek client
 * of its own replica; every operation is logged with its tentative and its stable outcome, and
 * each branch shows the account's balance as the tentative and then the stable view.
 *
 * State is mirrored in data attributes, for tests and curious readers:
 * - a log row: `data-state` (pending → tentative → final | error), `data-views` (levels of the
 *   views, in arrival order), `data-tentative` (the first tentative outcome), `data-outcome`
 *   (the final one) and `data-revised` (yes when the final outcome differs from the first one);
 * - a branch: `data-state` (loading | tentative | stable | error) and `data-views` (the views of
 *   its last completed balance read, in arrival order).
 */
import { connect, OperationFailed } from '@creek/client';
// Types only: no server code in the browser bundle.
import type { BankApp } from './app.js';
import { Bank, type WithdrawResult } from './bank.js';
import { formatCents, parseDollars } from './money.js';
import { PageConfigSchema } from './page-config.js';

interface Branch {
  readonly name: string;
  readonly bank: Bank;
  readonly el: HTMLElement;
  readonly amount: HTMLInputElement;
  /** Balance reads issued, the latest one whose views are on screen, and those in flight. */
  issued: number;
  shown: number;
  reading: number;
}

// What the page server put into the page, checked: a wrong config fails here, saying which field.
const config = PageConfigSchema.parse((globalThis as { CREEK_PAGE?: unknown }).CREEK_PAGE);
const { account, rateBps } = config;
const log = document.querySelector<HTMLTableSectionElement>('#log tbody')!;
const race = document.querySelector<HTMLButtonElement>('#race')!;
let seq = 0;

const branches: Branch[] = config.branches.map((b, i) => {
  const el = document.createElement('section');
  el.className = 'branch';
  el.dataset.branch = String(i);
  el.dataset.state = 'loading';
  el.innerHTML = `
    <h2></h2>
    <p class="balance">Balance:
      <span class="tentative"><span class="value" data-role="tentative">…</span> tentative</span> ·
      <span class="stable"><span class="value" data-role="stable">…</span> stable</span></p>
    <p><label>Amount ($) <input data-role="amount" value="10.00" inputmode="decimal"></label></p>
    <p><button data-action="deposit" disabled>Deposit</button>
      <button data-action="withdraw" disabled>Withdraw</button>
      <button data-action="interest" disabled>Accrue interest (${rateBps / 100} %)</button>
      <button data-action="refresh">Refresh</button></p>`;
  el.querySelector('h2')!.textContent = `${b.name} · replica ${b.replica}`;
  document.getElementById('branches')!.append(el);
  const branch: Branch = {
    name: b.name,
    bank: new Bank(connect<BankApp>({ urls: b.urls, token: config.token })),
    el,
    amount: el.querySelector<HTMLInputElement>('[data-role=amount]')!,
    issued: 0,
    shown: 0,
    reading: 0,
  };
  const on = (action: string, f: (b: Branch) => void): void =>
    el.querySelector(`[data-action=${action}]`)!.addEventListener('click', () => f(branch));
  on('deposit', deposit);
  on('withdraw', withdraw);
  on('interest', accrue);
  on('refresh', refresh);
  return branch;
});

race.disabled = true;
race.addEventListener('click', () => branches.forEach(withdraw));

/** Reads the balance at a branch: the tentative view, then the stable one. */
function refresh(b: Branch): void {
  const mine = ++b.issued;
  const views: string[] = [];
  // Views of an older read that arrive late must not overwrite a newer one's.
  const current = (): boolean => {
    if (mine < b.shown) return false;
    b.shown = mine;
    return true;
  };
  b.reading++;
  b.el.dataset.state = 'loading';
  b.bank.balance(account).setCallbacks({
    onUpdate: (cents, view) => {
      views.push(view.level);
      if (current()) show(b, 'tentative', cents);
    },
    onFinal: (cents, view) => {
      b.reading--;
      views.push(view.level);
      if (!current()) return;
      // No preliminary view came: the stable value is also the best tentative one.
      if (views.length === 1) show(b, 'tentative', cents);
      show(b, 'stable', cents);
      b.el.dataset.views = views.join(' ');
      ready(b);
    },
    onError: (e) => {
      b.reading--;
      if (!current()) return;
      b.el.dataset.state = 'error';
      b.el.querySelector('[data-role=stable]')!.textContent = message(e);
    },
  });
}

function show(b: Branch, view: 'tentative' | 'stable', cents: number): void {
  b.el.querySelector(`[data-role=${view}]`)!.textContent = formatCents(cents);
  b.el.dataset.state = view;
}

/**
 * A branch's ops are enabled once its replica has stably seen the account: a stable read there
 * means that replica has committed the account's opening, so a weak deposit there cannot miss it.
 */
function ready(b: Branch): void {
  b.el.dataset.ready = 'yes';
  b.el.querySelectorAll('button').forEach((button) => (button.disabled = false));
  race.disabled = !branches.every((x) => x.el.dataset.ready === 'yes');
}

const refreshAll = (): void => branches.forEach(refresh);

/** The amount in a branch's box, or null (and the box marked) when it is not an amount. */
function amountOf(b: Branch): number | null {
  const cents = parseDollars(b.amount.value);
  const ok = cents !== null && cents > 0;
  b.amount.setCustomValidity(ok ? '' : 'an amount of dollars, like 12.50');
  b.amount.reportValidity();
  return ok ? cents : null;
}

function deposit(b: Branch): void {
  const cents = amountOf(b);
  if (cents === null) return;
  const row = addRow(b, `deposit ${formatCents(cents)}`, 'weak');
  b.bank.deposit(account, cents).setCallbacks({
    onFinal: (balance, view) => {
      // A weak op has one answer: this replica's. It is ordered (and stable) later, silently.
      finish(row, view.level, 'accepted', `balance ${formatCents(balance)} at this replica`);
      note(row, 'weak op: no stable answer to wait for');
      refreshAll();
    },
    onError: (e) => fail(row, e),
  });
}

function withdraw(b: Branch): void {
  const cents = amountOf(b);
  if (cents === null) return;
  const row = addRow(b, `withdraw ${formatCents(cents)}`, 'strong');
  const tentatives: string[] = [];
  b.bank.withdraw(account, cents).setCallbacks({
    onUpdate: (r, view) => {
      row.dataset.views = [...views(row), view.level].join(' ');
      row.dataset.state = 'tentative';
      row.dataset.tentative ??= outcome(r);
      // A reorder at the replica re-executes the op and sends a new tentative answer: show
      // each change, so a revision is visible before the stable answer arrives.
      if (tentatives[tentatives.length - 1] !== describe(r)) tentatives.push(describe(r));
      const td = cell(row, 'tentative');
      td.textContent = tentatives.join(' → then ');
      td.className = 'tentative';
    },
    onFinal: (r, view) => {
      finish(row, view.level, outcome(r), describe(r));
      refreshAll();
    },
    onError: (e) => fail(row, e),
  });
}

function accrue(b: Branch): void {
  const row = addRow(b, `accrue interest at ${rateBps / 100} %`, 'weak');
  b.bank.accrueInterest(account, rateBps).then(
    (a) => {
      const what =
        a.amount === 0
          ? `nothing to credit on ${formatCents(a.basedOn)}`
          : `+${formatCents(a.amount)} on ${formatCents(a.basedOn)} seen here → ${formatCents(a.balance)}`;
      finish(row, 'weak', 'accepted', what);
      note(row, 'shadow deposit (weak): no stable answer to wait for');
      refreshAll();
    },
    (e: unknown) => fail(row, e),
  );
}

function outcome(r: WithdrawResult): string {
  return r.ok ? 'accepted' : 'refused';
}

function describe(r: WithdrawResult): string {
  return r.ok
    ? `accepted · balance ${formatCents(r.balance)}`
    : `refused: ${r.reason} (short by ${formatCents(r.shortBy)}) · balance ${formatCents(r.balance)}`;
}

function addRow(b: Branch, what: string, level: 'weak' | 'strong'): HTMLTableRowElement {
  const row = document.createElement('tr');
  row.dataset.seq = String(++seq);
  row.dataset.state = 'pending';
  row.dataset.level = level;
  row.dataset.views = '';
  for (const [name, text] of [
    ['seq', String(seq)],
    ['branch', b.name],
    ['op', what],
    ['tentative', '…'],
    ['stable', level === 'strong' ? '…' : ''],
  ] as const) {
    const td = document.createElement('td');
    td.dataset.cell = name;
    td.textContent = text;
    row.append(td);
  }
  log.prepend(row);
  return row;
}

function cell(row: HTMLTableRowElement, name: string): HTMLElement {
  return row.querySelector<HTMLElement>(`[data-cell=${name}]`)!;
}

function views(row: HTMLTableRowElement): string[] {
  return row.dataset.views === '' ? [] : row.dataset.views!.split(' ');
}

function note(row: HTMLTableRowElement, text: string): void {
  cell(row, 'stable').textContent = text;
  cell(row, 'stable').className = 'muted';
}

/** The final view: a strong op's goes in the stable column, a weak op's in the tentative one. */
function finish(row: HTMLTableRowElement, level: string, result: string, text: string): void {
  row.dataset.views = [...views(row), level].join(' ');
  row.dataset.state = 'final';
  row.dataset.outcome = result;
  const target = cell(row, level === 'strong' ? 'stable' : 'tentative');
  target.textContent = text;
  target.className = level === 'strong' ? 'stable' : 'tentative';
  if (level === 'strong' && row.dataset.tentative !== undefined) {
    // Did the stable answer confirm what the branch was first told, or revise it?
    const revised = row.dataset.tentative !== result;
    row.dataset.revised = revised ? 'yes' : 'no';
    cell(row, 'tentative').className = revised ? 'revoked' : 'confirmed';
  }
}

function fail(row: HTMLTableRowElement, e: unknown): void {
  row.dataset.state = 'error';
  const target = cell(row, row.dataset.level === 'strong' ? 'stable' : 'tentative');
  target.textContent = message(e);
  target.className = 'error';
}

function message(e: unknown): string {
  if (e instanceof OperationFailed) return `failed: ${e.reason}`;
  return e instanceof Error ? e.message : String(e);
}

// Open the account (idempotent, strong) before showing it: deposits need it. Then keep the
// balances fresh, so a branch also sees what the other one did (one read at a time per branch).
void branches[0]!.bank.open(account).then(
  () => {
    refreshAll();
    if (config.refreshMs > 0)
      setInterval(() => branches.filter((b) => b.reading === 0).forEach(refresh), config.refreshMs);
  },
  (e: unknown) => {
    for (const b of branches) {
      b.el.dataset.state = 'error';
      b.el.querySelector('[data-role=stable]')!.textContent = message(e);
    }
  },
);
