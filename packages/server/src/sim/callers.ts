import type { App, AnyOpDefinition, Tx } from '@creek/app';
import { formatOpId, opKey, type OpId } from '@creek/replica/core/op-id.js';
import type { ExecutionJob, Req } from '@creek/replica/core/types.js';
import { callerText } from './users.js';

/** Where an op's caller was seen: a replica's copy of its Req, one execution, its client. */
interface Sighting {
  readonly where: string;
  readonly caller: string;
}

/** An op's sightings: the first, and every later one that disagreed with it. */
interface OpSightings {
  readonly id: OpId;
  readonly op: string;
  readonly first: Sighting;
  readonly conflicts: Sighting[];
}

/**
 * Every place a run saw an op's caller (`tx.user`): the invoking client, each replica's durable
 * copy of the op's Req, and each execution of the op at each replica, first and re-executions
 * alike, as the op's own code read `tx.user`. One op, one caller: checkCallers reports every op
 * seen with two. Ops are told apart by id and timestamp, since a lost disk lets an id be used
 * again.
 *
 * The executions are seen through the app the simulated executors run (`observe`): each op's
 * `run` notes the `tx.user` it gets while an execution is `around` it, and nothing otherwise (the
 * checkers' reference interpreter runs the same app unobserved).
 */
export class CallerSightings {
  private readonly ops = new Map<string, OpSightings>();
  private current: { readonly where: string; readonly id: OpId; readonly ts: number } | null = null;
  /** Executions per op and replica, to name the re-execution a conflict was seen in. */
  private readonly executions = new Map<string, number>();

  /** Notes that `where` saw op `id` (its timestamp `ts`) invoked by `caller`. */
  saw(id: OpId, ts: number, op: string, where: string, caller: string): void {
    const key = `${opKey(id)}@${ts}`;
    const s = this.ops.get(key);
    if (s === undefined) this.ops.set(key, { id, op, first: { where, caller }, conflicts: [] });
    else if (s.first.caller !== caller) s.conflicts.push({ where, caller });
  }

  /**
   * Notes the caller the client of op `id` invoked it as, once the op has an id (its first answer).
   * `req` is the run's record of the op (its origin persisted it before it answered), for its
   * timestamp; a Req of another op under that id (a resubmission answered elsewhere) is not it.
   */
  sawInvoked(id: OpId, req: Req | undefined, op: string, caller: string): void {
    if (req !== undefined && req.op === op) this.saw(id, req.ts, op, 'its client', caller);
  }

  /** Runs execution `job` of replica `replica` (`run`), noting the caller its op's code saw. */
  around<T>(replica: number, job: ExecutionJob, run: () => T): T {
    if (job.id === null) return run(); // a read, never ordered: no other replica runs it
    const key = `${opKey(job.id)}@${job.ts}`;
    const n = (this.executions.get(`${key} ${replica}`) ?? 0) + 1;
    this.executions.set(`${key} ${replica}`, n);
    this.current = { where: `replica ${replica}, execution ${n}`, id: job.id, ts: job.ts };
    try {
      return run();
    } finally {
      this.current = null;
    }
  }

  /** `app`, whose ops note the caller they run as inside `around`. */
  observe(app: App): App {
    const wrapped = new Map<string, AnyOpDefinition>();
    const noting = (name: string, def: AnyOpDefinition): AnyOpDefinition => ({
      ...def,
      run: (tx: Tx, args: unknown) => {
        const c = this.current;
        if (c !== null) this.saw(c.id, c.ts, name, c.where, callerText(tx.user));
        return def.run(tx, args) as unknown;
      },
    });
    return {
      ...app,
      lookup: (name) => {
        const def = app.lookup(name);
        if (def === undefined) return undefined;
        let w = wrapped.get(name);
        if (w === undefined) wrapped.set(name, (w = noting(name, def)));
        return w;
      },
    };
  }

  /** Violations: every op seen with two callers, each sighting that disagreed named. */
  check(): string[] {
    const out: string[] = [];
    for (const s of this.ops.values()) {
      if (s.conflicts.length === 0) continue;
      const id = formatOpId(s.id);
      const shown = s.conflicts.slice(0, 3).map((c) => `${c.where} as ${c.caller}`);
      const more = s.conflicts.length > 3 ? ` and ${s.conflicts.length - 3} more` : '';
      out.push(
        `(u) ${s.op} ${id} has two callers: ${s.first.where} saw ${s.first.caller}, but ${shown.join('; ')}${more}`,
      );
    }
    return out;
  }
}
