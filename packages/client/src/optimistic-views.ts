import { InvalidArguments } from './errors.js';
import type { OptimisticChange } from './session/optimistic.js';

/**
 * The changes `optimistic` says op `op` makes, each query's arguments checked as `check` checks
 * an invocation's; InvalidArguments if one is bad or `optimistic` throws (the op is then not sent).
 */
export function collectOptimistic(
  op: string,
  optimistic: (views: {
    update(op: string, args: unknown, change: (v: never) => unknown): void;
  }) => void,
  check: (op: string, args: unknown) => unknown,
): OptimisticChange[] | InvalidArguments {
  const changes: OptimisticChange[] = [];
  let bad: InvalidArguments | null = null;
  try {
    optimistic({
      update: (query, args, change) => {
        const checked = check(query, args);
        if (checked instanceof InvalidArguments) bad ??= checked;
        else if (typeof change !== 'function')
          bad ??= refuse(op, `the change of ${query} is not a function`);
        else changes.push({ op: query, args: checked, update: change as (v: unknown) => unknown });
      },
    });
  } catch (err) {
    return refuse(op, `optimistic threw: ${err instanceof Error ? err.message : String(err)}`);
  }
  return bad ?? changes;
}

function refuse(op: string, problem: string): InvalidArguments {
  return new InvalidArguments({
    op,
    field: 'optimistic',
    problem,
    fix: "call views.update(query, args, value => newValue) for each live query the op changes, with the query's own arguments",
  });
}
