import type { ReplicaStatus } from '@creek/server/node';
import { formatSummary, summarize } from '../shared/stats.js';
import type { LoadResult } from './load.js';
import { formatCents } from './money.js';

/** Everything the CLI measured in one run, and how it prints. */
export interface Report {
  readonly replicas: number;
  readonly delayMs: number;
  readonly clients: number;
  /** Whom each client was signed in as (null: anonymous). */
  readonly users: readonly (string | null)[];
  readonly accounts: readonly string[];
  /** Each account's owner (null: nobody's, on a cluster without users). */
  readonly owners: ReadonlyMap<string, string | null>;
  /** Stable balances after seeding, before the load. */
  readonly opening: ReadonlyMap<string, number>;
  readonly load: LoadResult;
  /** Balances read right when the load ended: the tentative and the stable view. */
  readonly atEnd: readonly { account: string; tentative: number | null; stable: number }[];
  /** After the barrier: each replica's stable balance per account. */
  readonly perReplica: readonly Record<string, number>[];
  /** The local cluster's statuses once converged (null for a cluster given by --urls). */
  readonly statuses: readonly ReplicaStatus[] | null;
}

/** The summary text, and whether every check held (the CLI's exit code). */
export function formatReport(r: Report): { text: string; ok: boolean } {
  const { load } = r;
  const lines: string[] = [];
  const pct = (n: number, of: number): string =>
    of === 0 ? '–' : `${((100 * n) / of).toFixed(1)} %`;
  const w = load.withdrawals;
  const withdrawals = w.accepted + w.refused;
  const secs = load.elapsedMs / 1000;
  lines.push(
    `bank: ${load.ops} ops by ${r.clients} clients on ${r.replicas} replicas` +
      `${r.delayMs > 0 ? ` (${r.delayMs} ms one-way between replicas)` : ''}` +
      ` in ${secs.toFixed(1)} s, ${(load.ops / secs).toFixed(0)} ops/s`,
    `  signed in as  ${r.users.every((u) => u === null) ? "nobody: every client anonymous, every account nobody's" : r.users.map((u) => u ?? 'anonymous').join(', ')}`,
    `  deposits      ${pad(load.deposits.count)} weak                 +${formatCents(load.deposits.cents)}`,
    `  interest      ${pad(load.interest.count)} shadow deposits      +${formatCents(load.interest.cents)}` +
      `${load.interest.forbidden > 0 ? `; ${load.interest.forbidden} refused before ordering (Forbidden: no admin)` : ''}`,
    `  withdrawals   ${pad(withdrawals + w.forbidden)} strong: ${w.accepted} accepted −${formatCents(w.acceptedCents)}, ` +
      `${w.refused} refused (insufficient funds, ${pct(w.refused, withdrawals)})` +
      `${w.forbidden > 0 ? `, ${w.forbidden} forbidden (not the owner's)` : ''}`,
    `    stable answer differed from the first tentative one: ${w.revised} (${pct(w.revised, withdrawals)}),` +
      ` of which accept/refuse flipped: ${w.decisionRevised}; re-sent tentative views: ${w.retentatives}`,
    `  balance reads ${pad(load.balanceReads.count)} first tentative ≠ stable: ${load.balanceReads.revised}`,
    `  failed ops    ${pad(load.failures.length)}${load.failures.length > 0 ? ` e.g. ${load.failures[0]}` : ''}`,
    'latency',
  );
  const lat: [string, number[]][] = [
    ['deposit (weak, its only view)', load.latency.deposit],
    ['withdraw, tentative view', load.latency.withdrawTentative],
    ['withdraw, stable view', load.latency.withdrawStable],
    ['balance, tentative view', load.latency.balanceTentative],
    ['balance, stable view', load.latency.balanceStable],
    ['accrue interest (read + deposit)', load.latency.interest],
  ];
  for (const [name, sample] of lat)
    lines.push(`  ${name.padEnd(34)} ${formatSummary(summarize(sample))}`);

  const col = (t: string): string => t.padStart(12);
  lines.push(
    `balances  ${''.padEnd(10)}${col('opening')} ${col('+ ledger')} ${col('= expected')}  |` +
      ` after load: ${col('tentative')} ${col('stable')} | settled, at each replica`,
  );
  let ledgerOk = true;
  for (const account of r.accounts) {
    const opening = r.opening.get(account)!;
    const expected = opening + load.ledger.get(account)!;
    const end = r.atEnd.find((e) => e.account === account)!;
    const replicas = r.perReplica.map((p) => p[account]!);
    if (replicas.some((b) => b !== expected)) ledgerOk = false;
    lines.push(
      `  ${`${account} (${r.owners.get(account) ?? 'nobody'}'s)`.padEnd(18)} ${money(opening)} ${money(load.ledger.get(account)!)} ${money(expected)}  |` +
        `             ${end.tentative === null ? col('—') : money(end.tentative)} ${money(end.stable)} | ` +
        replicas.map(formatCents).join(' '),
    );
  }

  const noNegative = load.minStableBalance >= 0;
  const statuses = r.statuses;
  const converged =
    statuses === null ||
    statuses.every(
      (s) => s.digest === statuses[0]!.digest && s.committed === statuses[0]!.committed,
    );
  const noFailures = load.failures.length === 0;
  const noViolations = load.violations.length === 0;
  const check = (ok: boolean, what: string): string => `  ${ok ? 'ok  ' : 'FAIL'} ${what}`;
  lines.push(
    'checks',
    check(
      noNegative,
      `no stable answer showed a negative balance (lowest seen: ${
        Number.isFinite(load.minStableBalance) ? formatCents(load.minStableBalance) : 'none'
      })`,
    ),
    check(
      ledgerOk,
      "every replica's stable balance = opening + deposits + interest − accepted withdrawals",
    ),
    statuses === null
      ? '  --   replica digests not compared (cluster given by --urls: no /status access here)'
      : check(
          converged,
          `replicas converged: ${statuses.map((s) => `#${s.id} committed ${s.committed} state ${shortHash(s.digest)}`).join(', ')}`,
        ),
    check(
      noViolations,
      `only owners withdrew, only admins accrued interest${noViolations ? '' : `: ${load.violations.length} answers broke it, e.g. ${load.violations[0]}`}`,
    ),
    check(noFailures, 'no op failed'),
  );
  return {
    text: lines.join('\n') + '\n',
    ok: noNegative && ledgerOk && converged && noViolations && noFailures,
  };
}

/** /status's digest (32 hex digits) is long for a table: its first 12 tell states apart well enough. */
const shortHash = (digest: string): string => digest.slice(0, 12);
const pad = (n: number): string => String(n).padStart(5);
const money = (cents: number): string => formatCents(cents).padStart(12);
