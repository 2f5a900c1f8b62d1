import { sameAttributes, type FastPathOp, type FastPathReplica } from './replica.js';

/**
 * What a leaderless fast path must guarantee, judged on a finished fault-free run of the
 * prototype (sim/fast-path/run.ts). At most a few lines per check.
 *
 * (a) Every op is committed at its origin and executed exactly once at every replica: nothing is
 *     lost and nothing waits for good on a fault-free run.
 * (b) Agreement: every replica committed the same attributes (seq and deps) for an op.
 * (c) Consistency (EPaxos's invariant): of two conflicting committed ops (one key), at least one
 *     has the other in its dependencies. Without it, nothing orders them.
 * (d) One order: every replica executed the ops of each key in the same order.
 * (e) Real time: an op committed at its origin before a conflicting op was proposed is executed
 *     before it everywhere (strong ops are linearizable).
 */
export function checkFastPath(
  ops: readonly FastPathOpRecord[],
  replicas: readonly FastPathReplica[],
): string[] {
  const out: string[] = [];
  const say = (check: string, line: string): void => {
    if (out.filter((l) => l.startsWith(`(${check})`)).length < 3) out.push(`(${check}) ${line}`);
  };

  // (a)
  for (const rec of ops)
    if (rec.committedAt === null)
      say('a', `op ${rec.op.id} (key ${rec.op.key}) was never committed at its origin`);
  for (const r of replicas) {
    const seen = new Set<string>();
    for (const id of r.executed) {
      if (seen.has(id)) say('a', `replica ${r.me} executed ${id} twice`);
      seen.add(id);
    }
    if (seen.size !== ops.length)
      say(
        'a',
        `replica ${r.me} executed ${seen.size} of ${ops.length} ops (${r.waiting()} committed and waiting)`,
      );
  }

  // (b)
  for (const rec of ops) {
    const committed = replicas
      .map((r) => ({ r, a: r.committedAttributes(rec.op.id) }))
      .filter((x) => x.a !== undefined);
    const first = committed[0];
    for (const other of committed.slice(1))
      if (first !== undefined && !sameAttributes(first.a!, other.a!))
        say(
          'b',
          `replicas ${first.r.me} and ${other.r.me} committed ${rec.op.id} with different attributes`,
        );
  }

  // (c)
  const byKey = new Map<string, FastPathOpRecord[]>();
  for (const rec of ops) {
    const list = byKey.get(rec.op.key) ?? [];
    list.push(rec);
    byKey.set(rec.op.key, list);
  }
  const depsAt0 = new Map<string, ReadonlySet<string>>();
  for (const rec of ops) {
    const deps = replicas[0]!.committedAttributes(rec.op.id)?.deps;
    if (deps !== undefined) depsAt0.set(rec.op.id, new Set(deps));
  }
  for (const [key, list] of byKey)
    for (let i = 0; i < list.length; i++)
      for (let j = i + 1; j < list.length; j++) {
        const a = list[i]!.op.id;
        const b = list[j]!.op.id;
        const da = depsAt0.get(a);
        const db = depsAt0.get(b);
        if (da === undefined || db === undefined) continue;
        if (!da.has(b) && !db.has(a))
          say('c', `conflicting ops ${a} and ${b} (key ${key}): neither depends on the other`);
      }

  // (d) and (e), from each replica's execution positions.
  const positions = replicas.map((r) => new Map(r.executed.map((id, i) => [id, i])));
  for (const [key, list] of byKey) {
    // Each replica's order of the key's ops that both it and replica 0 executed ((a) names the
    // ones missing).
    const orderAt = (k: number): string[] =>
      list
        .map((rec) => rec.op.id)
        .filter((id) => positions[k]!.has(id) && positions[0]!.has(id))
        .sort((x, y) => positions[k]!.get(x)! - positions[k]!.get(y)!);
    const first = orderAt(0).join(' ');
    for (let k = 1; k < replicas.length; k++) {
      const other = orderAt(k).join(' ');
      if (
        other !==
        first
          .split(' ')
          .filter((id) => positions[k]!.has(id))
          .join(' ')
      )
        say('d', `key ${key}: replica 0 executed [${first}], replica ${k} [${other}]`);
    }
    for (const a of list)
      for (const b of list) {
        if (a === b || a.committedAt === null || a.committedAt >= b.proposedAt) continue;
        for (let k = 0; k < replicas.length; k++) {
          const pa = positions[k]!.get(a.op.id);
          const pb = positions[k]!.get(b.op.id);
          if (pa !== undefined && pb !== undefined && pa > pb)
            say(
              'e',
              `key ${key}: ${a.op.id} committed at ${a.committedAt.toFixed(1)} ms, before ${b.op.id} was proposed (${b.proposedAt.toFixed(1)} ms), yet replica ${k} executed it after`,
            );
        }
      }
  }
  return out;
}

/** One op as its client saw it (sim/fast-path/run.ts records them). */
export interface FastPathOpRecord {
  readonly op: FastPathOp;
  readonly proposedAt: number;
  /** When its origin committed it (its place in the order is fixed), or null. */
  committedAt: number | null;
  /**
   * When its origin executed it, or null: the client's answer, which carries the op's result and
   * so waits for every op it depends on to commit and run (today's path answers the same way).
   */
  executedAt: number | null;
  /** Whether it committed by the fast path (null: not committed). */
  fast: boolean | null;
}
