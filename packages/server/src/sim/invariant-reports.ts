import { z } from 'zod';
import { defineApp, op, type App, type JsonValue } from '@creek/app';
import type { InvariantReport } from './run-record.js';
import { simInvariants, simOps } from './workload.js';

/**
 * SimConfig.invariants: every replica checks the app's invariants on its finalized state after
 * each op it finalizes (ReplicaOptions.checkInvariants), and the run fails on any one broken.
 *
 * The finalized state is the serial execution of the committed order, so what this catches is an
 * op that breaks an invariant even run in order (the planted `overdraw`: a transfer that never
 * looks at the balance) or a replica whose finalized state is not that serial execution. A weak op
 * that should have been strong shows in the answers its callers got, not here: Creek re-executes
 * it at its final position (`creek check` is the tool for that choice).
 */

const num = (v: JsonValue | undefined): number => (typeof v === 'number' ? v : 0);
const key = z.string().min(1);

/**
 * The simulator's app with a planted bug (SimConfig.unsafeOverdraw): `transfer` moves the money
 * whatever the balance, so an account can go below zero, which its 'no-overdraft' invariant
 * forbids. Ops, names and arguments are the same, so the workload draws what it always did.
 */
export function overdrawApp(): App {
  return defineApp(
    {
      ...simOps,
      transfer: op({
        args: z.object({ from: key, to: key, amount: z.number().int().positive() }),
        run(tx, { from, to, amount }) {
          const balance = num(tx.get(from));
          tx.put(from, balance - amount);
          tx.put(to, num(tx.get(to)) + amount);
          return balance - amount;
        },
      }),
    },
    { invariants: simInvariants },
  );
}

/**
 * One violation per invariant and committed position, naming the op finalized there and the
 * replicas that reported it (every replica that finalizes that position should).
 */
export function checkInvariantReports(reports: readonly InvariantReport[]): string[] {
  const seen = new Map<string, { first: InvariantReport; replicas: Set<number> }>();
  for (const r of reports) {
    const k = `${r.violation.invariant}@${r.violation.position}`;
    const entry = seen.get(k) ?? { first: r, replicas: new Set<number>() };
    entry.replicas.add(r.replica);
    seen.set(k, entry);
  }
  return [...seen.values()]
    .sort((a, b) => a.first.violation.position - b.first.violation.position)
    .map(({ first: { violation: v, at }, replicas }) => {
      const threw = v.error === null ? '' : ` (it threw: ${v.error})`;
      return (
        `(invariant) '${v.invariant}' broken by the finalized state after ${v.op} ` +
        `${v.id.replica}.${v.id.eventNo} at committed position ${v.position}${threw}; reported by ` +
        `replica${replicas.size === 1 ? '' : 's'} ${[...replicas].sort().join(', ')}, first at ${at.toFixed(1)} ms`
      );
    });
}
