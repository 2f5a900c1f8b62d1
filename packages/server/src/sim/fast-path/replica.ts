/**
 * A prototype of a leaderless fast path for strong ops, in the style of EPaxos (Moraru et al.,
 * SOSP 2013), as a pure state machine the simulator drives (sim/fast-path/run.ts). It is not part
 * of Creek's replicas: it exists to measure, under the WAN profiles and with every message on its
 * link, what docs/architecture/beyond-one-leader.md says such a path would cost and where it
 * breaks, before anything of it is built into CAB.
 *
 * Each replica leads its own ops. Ops conflict when they touch the same key. To order op γ, its
 * origin (the command leader) gives it attributes — `deps`, every conflicting op it knows, and
 * `seq`, one above theirs — and sends a PreAccept to every other replica; each adds the
 * conflicting ops it knows and answers. Once a fast quorum (F + ⌊(F + 1) / 2⌋ of N = 2F + 1,
 * itself counted) has answered, γ commits at once if none of them changed the attributes (the fast
 * path: one round trip to the nearest fast quorum); otherwise the origin takes the union of the
 * answers and runs an Accept round to a majority first (the slow path: a second round trip).
 * Every replica executes committed ops in an order derived from the dependency graph alone:
 * strongly connected components in dependency order, and within one by (seq, op id), so replicas
 * that commit the same attributes execute conflicting ops in the same order.
 *
 * Left out on purpose, and why it is a prototype: recovery of an op whose origin fails mid-round
 * (EPaxos's subtle part), ballots, failures of any kind, and Creek's weak ops (a weak op is made
 * stable by the strong op whose causal context holds it; with a dependency graph instead of a
 * sequence, where each weak op lands is an open question). The driver runs it fault-free.
 */

/** A strong op to order; two ops conflict when they name the same key. */
export interface FastPathOp {
  /** Unique in a run: `<origin>.<n>`. */
  readonly id: string;
  readonly origin: number;
  readonly key: string;
}

/** An op's place in the order as one replica sees it. */
export interface Attributes {
  readonly seq: number;
  /** Ids of the conflicting ops it must follow or be ordered with, sorted. */
  readonly deps: readonly string[];
}

export type FastPathMessage =
  | { readonly t: 'preAccept'; readonly op: FastPathOp; readonly attrs: Attributes }
  | { readonly t: 'preAcceptOk'; readonly id: string; readonly attrs: Attributes }
  | { readonly t: 'accept'; readonly op: FastPathOp; readonly attrs: Attributes }
  | { readonly t: 'acceptOk'; readonly id: string }
  | { readonly t: 'commit'; readonly op: FastPathOp; readonly attrs: Attributes };

export interface Send {
  readonly to: number;
  readonly message: FastPathMessage;
}

/** What one step of a replica did: messages to send, and its own ops it committed. */
export interface Step {
  readonly sends: Send[];
  /** Ops this replica leads that committed in this step, and whether by the fast path. */
  readonly committed: { readonly id: string; readonly fast: boolean }[];
}

export interface FastPathOptions {
  /**
   * A planted bug (`--plant fast-path-changed-deps`): a command leader commits its own
   * attributes once a fast quorum answered even when an answer added dependencies, so two
   * concurrent conflicting ops can commit with neither depending on the other.
   */
  readonly unsafeIgnoreChangedDeps?: boolean;
}

type Status = 'preAccepted' | 'accepted' | 'committed';

interface Instance {
  readonly op: FastPathOp;
  attrs: Attributes;
  status: Status;
}

/** What a command leader gathers for one of its ops while it is being ordered. */
interface Leading {
  readonly proposed: Attributes;
  /** Answers to the PreAccept so far (its own attributes not counted). */
  readonly answers: Attributes[];
  acceptOks: number;
  phase: 'preAccept' | 'accept' | 'done';
}

/** The fast quorum of N = 2F + 1 replicas (EPaxos, optimized): F + ⌊(F + 1) / 2⌋, self counted. */
export function fastQuorumSize(n: number): number {
  const f = Math.floor((n - 1) / 2);
  return Math.max(1, f + Math.floor((f + 1) / 2));
}

export const majoritySize = (n: number): number => Math.floor(n / 2) + 1;

export class FastPathReplica {
  private readonly instances = new Map<string, Instance>();
  /** Ids of every op known here, per key, for the dependencies of new ones. */
  private readonly byKey = new Map<string, string[]>();
  private readonly leading = new Map<string, Leading>();
  private readonly executedIds = new Set<string>();
  /** Op ids in the order this replica executed them. */
  readonly executed: string[] = [];

  constructor(
    readonly me: number,
    readonly replicas: number,
    private readonly options: FastPathOptions = {},
  ) {}

  /** A client next to this replica asks for `op`: this replica leads it. */
  propose(op: FastPathOp): Step {
    if (op.origin !== this.me) throw new Error(`op ${op.id} is not replica ${this.me}'s`);
    if (this.instances.has(op.id)) throw new Error(`op ${op.id} was proposed already`);
    const attrs = this.attributesFor(op, { seq: 0, deps: [] });
    this.remember(op, attrs, 'preAccepted');
    this.leading.set(op.id, { proposed: attrs, answers: [], acceptOks: 0, phase: 'preAccept' });
    const step: Step = { sends: [], committed: [] };
    // One replica alone is its own fast quorum.
    if (fastQuorumSize(this.replicas) === 1) this.commit(op.id, attrs, true, step);
    else this.toOthers(step, { t: 'preAccept', op, attrs });
    return step;
  }

  /** A message from replica `from`. */
  receive(from: number, m: FastPathMessage): Step {
    const step: Step = { sends: [], committed: [] };
    switch (m.t) {
      case 'preAccept': {
        const known = this.instances.get(m.op.id);
        // A commit that overtook its PreAccept: the leader needs no answer from here any more.
        if (known !== undefined && known.status !== 'preAccepted') return step;
        const attrs = this.attributesFor(m.op, m.attrs);
        this.remember(m.op, attrs, 'preAccepted');
        step.sends.push({ to: from, message: { t: 'preAcceptOk', id: m.op.id, attrs } });
        return step;
      }
      case 'preAcceptOk':
        this.preAcceptOk(m.id, m.attrs, step);
        return step;
      case 'accept': {
        // An Accept may overtake its PreAccept (a far replica's link against the leader's round
        // trip to nearer ones): it carries the op for that.
        this.remember(m.op, m.attrs, 'accepted');
        step.sends.push({ to: from, message: { t: 'acceptOk', id: m.op.id } });
        return step;
      }
      case 'acceptOk': {
        const l = this.leading.get(m.id);
        if (l === undefined || l.phase !== 'accept') return step;
        l.acceptOks++;
        if (1 + l.acceptOks >= majoritySize(this.replicas))
          this.commit(m.id, this.instances.get(m.id)!.attrs, false, step);
        return step;
      }
      case 'commit':
        this.remember(m.op, m.attrs, 'committed');
        this.execute();
        return step;
    }
  }

  /** The attributes this replica committed for op `id`, if it did. */
  committedAttributes(id: string): Attributes | undefined {
    const i = this.instances.get(id);
    return i?.status === 'committed' ? i.attrs : undefined;
  }

  /** How many ops this replica knows are committed and has not executed (waiting on others). */
  waiting(): number {
    let n = 0;
    for (const [id, i] of this.instances)
      if (i.status === 'committed' && !this.executedIds.has(id)) n++;
    return n;
  }

  private preAcceptOk(id: string, attrs: Attributes, step: Step): void {
    const l = this.leading.get(id);
    if (l === undefined || l.phase !== 'preAccept') return;
    l.answers.push(attrs);
    if (1 + l.answers.length < fastQuorumSize(this.replicas)) return;
    const unchanged = l.answers.every((a) => sameAttributes(a, l.proposed));
    if (unchanged || this.options.unsafeIgnoreChangedDeps === true) {
      this.commit(id, l.proposed, true, step);
      return;
    }
    // The slow path: the union of what the fast quorum knew, accepted by a majority.
    const union = l.answers.reduce(mergeAttributes, l.proposed);
    const inst = this.instances.get(id)!;
    inst.attrs = union;
    inst.status = 'accepted';
    l.phase = 'accept';
    if (majoritySize(this.replicas) === 1) this.commit(id, union, false, step);
    else this.toOthers(step, { t: 'accept', op: inst.op, attrs: union });
  }

  private commit(id: string, attrs: Attributes, fast: boolean, step: Step): void {
    const l = this.leading.get(id);
    if (l !== undefined) l.phase = 'done';
    const op = this.instances.get(id)!.op;
    this.remember(op, attrs, 'committed');
    this.toOthers(step, { t: 'commit', op, attrs });
    step.committed.push({ id, fast });
    this.execute();
  }

  /** `given` extended with every conflicting op known here (an op never depends on itself). */
  private attributesFor(op: FastPathOp, given: Attributes): Attributes {
    const deps = new Set(given.deps);
    let seq = given.seq;
    for (const other of this.byKey.get(op.key) ?? []) {
      if (other === op.id) continue;
      deps.add(other);
      seq = Math.max(seq, this.instances.get(other)!.attrs.seq + 1);
    }
    return { seq: Math.max(seq, 1), deps: [...deps].sort() };
  }

  private remember(op: FastPathOp, attrs: Attributes, status: Status): void {
    const known = this.instances.get(op.id);
    if (known === undefined) {
      this.instances.set(op.id, { op, attrs, status });
      const ids = this.byKey.get(op.key) ?? [];
      ids.push(op.id);
      this.byKey.set(op.key, ids);
      return;
    }
    if (known.status === 'committed') return;
    known.attrs = attrs;
    known.status = status;
  }

  private toOthers(step: Step, message: FastPathMessage): void {
    for (let to = 0; to < this.replicas; to++) if (to !== this.me) step.sends.push({ to, message });
  }

  /**
   * Executes every committed op whose dependency graph is committed here: Tarjan's algorithm over
   * the committed ops reachable from it, each strongly connected component once every component
   * it depends on has run, its ops by (seq, id). An op whose graph reaches an op not committed
   * here waits.
   */
  private execute(): void {
    const ready = new Map<string, boolean>();
    // Whether every op reachable from `id` is committed here (memoized; cycles count as ready
    // until proven otherwise, which the outer loop's fixed order makes safe: a cycle is ready
    // only if every op on it is committed and reaches nothing uncommitted).
    const committedGraph = (id: string, seen: Set<string>): boolean => {
      const memo = ready.get(id);
      if (memo !== undefined) return memo;
      if (this.executedIds.has(id)) return true;
      const i = this.instances.get(id);
      if (i === undefined || i.status !== 'committed') return false;
      if (seen.has(id)) return true;
      seen.add(id);
      const ok = i.attrs.deps.every((d) => committedGraph(d, seen));
      if (!ok) ready.set(id, false);
      return ok;
    };
    const ids = [...this.instances.keys()]
      .filter((id) => !this.executedIds.has(id) && this.instances.get(id)!.status === 'committed')
      .sort();
    for (const id of ids) {
      if (this.executedIds.has(id) || !committedGraph(id, new Set())) continue;
      for (const scc of this.components(id)) {
        const order = scc
          .map((x) => ({ x, seq: this.instances.get(x)!.attrs.seq }))
          .sort((a, b) => a.seq - b.seq || (a.x < b.x ? -1 : a.x > b.x ? 1 : 0));
        for (const { x } of order) {
          this.executedIds.add(x);
          this.executed.push(x);
        }
      }
    }
  }

  /**
   * The strongly connected components of the unexecuted ops reachable from `root`, dependencies
   * first (Tarjan's algorithm emits a component after every component it reaches).
   */
  private components(root: string): string[][] {
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const onStack = new Set<string>();
    const stack: string[] = [];
    const out: string[][] = [];
    let next = 0;
    const visit = (v: string): void => {
      index.set(v, next);
      low.set(v, next);
      next++;
      stack.push(v);
      onStack.add(v);
      for (const w of this.instances.get(v)!.attrs.deps) {
        if (this.executedIds.has(w)) continue;
        if (!index.has(w)) {
          visit(w);
          low.set(v, Math.min(low.get(v)!, low.get(w)!));
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
      if (low.get(v) === index.get(v)) {
        const scc: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          scc.push(w);
        } while (w !== v);
        out.push(scc);
      }
    };
    visit(root);
    return out;
  }
}

export function sameAttributes(a: Attributes, b: Attributes): boolean {
  return (
    a.seq === b.seq && a.deps.length === b.deps.length && a.deps.every((d, i) => d === b.deps[i])
  );
}

function mergeAttributes(a: Attributes, b: Attributes): Attributes {
  return { seq: Math.max(a.seq, b.seq), deps: [...new Set([...a.deps, ...b.deps])].sort() };
}
