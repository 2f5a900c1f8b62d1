import { fork } from 'node:child_process';
import { PLANTED_BUG_NAMES, PLANTED_BUGS, type PlantedBug } from './planted-bugs.js';
import {
  CLIENT_MODES,
  FAULT_MODES,
  runSimulation,
  STORAGE_FAULTS,
  type ClientMode,
  type FaultMode,
  type SimResult,
  type StorageFault,
} from './simulation.js';
import { parseStorageFaults, storageLine } from './storage-faults.js';
import { WAN_PROFILES, type WanProfileName } from './wan.js';

/**
 * `npm run sim -- --seeds N [--replicas R] [--faults none|partition|crash|all|lag|lag-cut] [--storage-faults LIST] [--clients model|sdk] [--nondeterministic] [--leader-placement] [--seed S] [--first F] [--plant BUG] [--network us-eu|global|uniform|mix] [--live-queries] [--contexts] [--shared-contexts] [--invariants] [--quorum-reads on|off] [--smr] [--verbose] [--json] [--trace] [--trace-every MS] [--jobs N]`
 * Runs N seeds (F, F+1, ...) or replays one seed, and ends with `sim: P passed, F failed`. With
 * `--json`, stdout has one JSON object per seed (JSON Lines: seed, replicas, faults, ok,
 * violations, parameters, stats, and the committed order as op ids) and the progress and the
 * summary go to stderr, so another program (the visualizer's tests) can compare a replay with it.
 * `--jobs N` runs the seeds in N processes, with the same runs and output as one.
 * `--plant BUG` runs with one of the bugs in planted-bugs.ts, to watch the checkers catch it.
 * `--nondeterministic` plants an op whose effects differ between replicas (sim/nondeterminism.ts),
 * which they must catch and name (checkDivergence).
 * `--leader-placement` gives a third of the seeds' replicas a preferred leader (one in six of those
 * a different one per replica), judged by the leadership checker (sim/leader-placement.ts).
 * `--trace` (with `--seed`) tells the run on stderr as it goes (sim/trace.ts): faults, membership
 * changes, and each replica's Paxos state every 100 simulated ms (`--trace-every MS`).
 * `--storage-faults torn,corrupt,stale,power-loss` (or `all`) adds storage faults to the crashes
 * (SimConfig.storageFaults): torn writes, flipped bits, stale records, power losses.
 * `--clients sdk` runs real client sessions of the SDK against the replicas' client endpoints
 * (SimConfig.clients): another run than the default model of clients for the same seed.
 * `--network mix`, the default, runs one seed in five on a WAN profile (sim/wan.ts; its summary
 * line says `network us-eu` or `network global` and the scale); `--network us-eu|global` runs every
 * seed on one, `--network uniform` none. (Runs started elsewhere, in tests and the visualizer, are
 * on uniform delays unless they ask, so that a seed pinned in a test runs as it always did.)
 */
interface Options {
  seeds: number;
  seed: number | null;
  first: number;
  replicas: number;
  faults: FaultMode;
  /** SimConfig.storageFaults (none: empty). */
  storageFaults: StorageFault[];
  clients: ClientMode;
  verbose: boolean;
  json: boolean;
  plant: PlantedBug | null;
  /** Clients also keep live queries open (SimConfig.liveQueries), checked by the watch checkers. */
  liveQueries: boolean;
  /** Sessions hand their context tokens to new clients (SimConfig.contexts; clients sdk). */
  contexts: boolean;
  /** Sessions share a context, some of their ops in it (SimConfig.sharedContexts; clients sdk). */
  sharedContexts: boolean;
  /** Strong reads by quorum in every run (on), in none (off), or drawn per seed (null). */
  quorumReads: boolean | null;
  /** Every run is the SMR baseline as the runtime runs it (SimConfig.smr). */
  smr: boolean;
  /** Replicas check the app's invariants on their finalized state (SimConfig.invariants). */
  invariants: boolean;
  nondeterministic: boolean;
  /** A third of the seeds give their replicas a preferred leader (SimConfig.leaderPlacement). */
  leaderPlacement: boolean;
  /** Simulated ms between the trace's status lines; null: no trace. */
  traceEveryMs: number | null;
  /** SimConfig.network: 'mix' (the default) runs one seed in five on a WAN profile. */
  network: WanProfileName | 'uniform' | 'mix';
  /** Processes to run the seeds in (`--jobs`; 1: this one). */
  jobs: number;
  /** This process is one of another's `--jobs` (runInWorkers): it runs the seeds it is sent. */
  worker: boolean;
}

function parse(argv: string[]): Options {
  const o: Options = {
    seeds: 100,
    seed: null,
    first: 1,
    replicas: 3,
    faults: 'all',
    storageFaults: [],
    clients: 'model',
    verbose: false,
    json: false,
    plant: null,
    liveQueries: false,
    contexts: false,
    sharedContexts: false,
    quorumReads: null,
    smr: false,
    invariants: false,
    nondeterministic: false,
    leaderPlacement: false,
    traceEveryMs: null,
    network: 'mix',
    jobs: 1,
    worker: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = (): number => {
      const raw = argv[++i];
      const v = Number(raw);
      if (raw === undefined || !Number.isInteger(v) || v < 0)
        fail(`${flag} needs a non-negative integer, got ${raw ?? 'nothing'}`);
      return v;
    };
    switch (flag) {
      case '--seeds':
        o.seeds = value();
        break;
      case '--seed':
        o.seed = value();
        break;
      case '--first':
        o.first = value();
        break;
      case '--replicas':
        o.replicas = value();
        if (o.replicas < 1 || o.replicas > 15) fail('--replicas must be between 1 and 15');
        break;
      case '--faults': {
        const mode = argv[++i];
        if (!FAULT_MODES.includes(mode as FaultMode))
          fail(`--faults must be one of ${FAULT_MODES.join(', ')}, got ${mode ?? 'nothing'}`);
        o.faults = mode as FaultMode;
        break;
      }
      case '--storage-faults': {
        const list = parseStorageFaults(argv[++i]);
        if (typeof list === 'string') fail(`--storage-faults ${list}`);
        o.storageFaults = list;
        break;
      }
      case '--clients': {
        const mode = argv[++i];
        if (!CLIENT_MODES.includes(mode as ClientMode))
          fail(`--clients must be one of ${CLIENT_MODES.join(', ')}, got ${mode ?? 'nothing'}`);
        o.clients = mode as ClientMode;
        break;
      }
      case '--plant': {
        const bug = argv[++i];
        if (!PLANTED_BUG_NAMES.includes(bug as PlantedBug))
          fail(`--plant must be one of ${PLANTED_BUG_NAMES.join(', ')}, got ${bug ?? 'nothing'}`);
        o.plant = bug as PlantedBug;
        break;
      }
      case '--network': {
        const name = argv[++i];
        const names: readonly string[] = [...WAN_PROFILES, 'uniform', 'mix'];
        if (!names.includes(name ?? ''))
          fail(`--network must be one of ${names.join(', ')}, got ${name ?? 'nothing'}`);
        o.network = name as WanProfileName | 'uniform' | 'mix';
        break;
      }
      case '--verbose':
        o.verbose = true;
        break;
      case '--contexts':
        o.contexts = true;
        break;
      case '--shared-contexts':
        o.sharedContexts = true;
        break;
      case '--live-queries':
        o.liveQueries = true;
        break;
      case '--invariants':
        o.invariants = true;
        break;
      case '--smr':
        o.smr = true;
        break;
      case '--quorum-reads': {
        const v = argv[++i];
        if (v !== 'on' && v !== 'off')
          fail(`--quorum-reads must be on or off, got ${v ?? 'nothing'}`);
        o.quorumReads = v === 'on';
        break;
      }
      case '--nondeterministic':
        o.nondeterministic = true;
        break;
      case '--leader-placement':
        o.leaderPlacement = true;
        break;
      case '--trace':
        o.traceEveryMs ??= 100;
        break;
      case '--trace-every':
        o.traceEveryMs = value();
        if (o.traceEveryMs < 1) fail('--trace-every needs a number of simulated ms, 1 or more');
        break;
      case '--json':
        o.json = true;
        break;
      case '--jobs':
        o.jobs = value();
        if (o.jobs < 1 || o.jobs > MAX_JOBS)
          fail(`--jobs needs a number of processes from 1 to ${MAX_JOBS}, got ${o.jobs}`);
        break;
      case '--worker':
        o.worker = true;
        break;
      case '--help':
        console.log(
          `usage: npm run sim -- --seeds N [--replicas R] [--faults ${FAULT_MODES.join('|')}] [--storage-faults ${STORAGE_FAULTS.join(',')}|all] [--clients ${CLIENT_MODES.join('|')}] [--nondeterministic] [--leader-placement] [--seed S] [--first F] [--plant ${PLANTED_BUG_NAMES.join('|')}] [--network ${[...WAN_PROFILES, 'uniform', 'mix'].join('|')}] [--live-queries] [--contexts] [--shared-contexts] [--invariants] [--quorum-reads on|off] [--smr] [--verbose] [--json] [--trace] [--trace-every MS] [--jobs N]`,
        );
        console.log(
          '  --jobs N: runs the seeds in N processes (the cores the machine has, say), each given the next seed as it finishes one; the same runs and the same output, in seed order, as one process',
        );
        console.log(
          '  --smr: no replica speculates and every update is ordered on arrival, the SMR baseline as `creek start --speculation off` runs it (by default one seed in eight does not speculate and orders weak ops by timestamp)',
        );
        console.log(
          "  --quorum-reads: strong reads take their index from a majority's frontiers (on) or the leader's read index (off, the default)",
        );
        console.log(
          '  --nondeterministic: the app has a planted op whose effects differ between replicas, which they must catch, name and contain',
        );
        console.log(
          "  --invariants: every replica checks the app's invariants on its finalized state after each op it finalizes, and a run fails on one broken (the op and the committed position named)",
          '  --live-queries: the clients also keep live queries open, and the checkers judge what they showed',
          "  --contexts (with --clients sdk): sessions now and then hand their context token to a new client at another replica, whose ops must see the session's writes",
          "  --shared-contexts (with --clients sdk): the sessions share a context (client.joinContext), and each op of one in it must see the others' ops the context acknowledged before it",
        );
        console.log(
          '  --leader-placement: a third of the seeds give their replicas a preferred leader (one in six of those a different one per replica); the leadership checker judges where leadership goes',
        );
        console.log(
          '  --storage-faults: with crash or all faults, disks also tear the write in flight when the power goes (torn), flip a bit of a record (corrupt), read a record back as an older version (stale), and lose their unsynced writes to a power loss, which a process crash keeps (power-loss); replicas checksum every record and rebuild a damaged disk from their peers',
        );
        console.log(
          '  --network: every seed on this WAN profile (per-link delays of @creek/server/geo, WAN timers), one seed in five, drawn by the seed (mix, the default), or none (uniform)',
        );
        console.log(
          "  --clients sdk: the clients are real client sessions of the SDK (failover, resubmission, abandon, live queries) talking to the replicas' client endpoints over simulated links; the default, model, hands ops straight to the replicas",
        );
        process.exit(0);
        break;
      default:
        fail(`unknown option ${flag} (try --help)`);
    }
  }
  if (o.traceEveryMs !== null && o.seed === null)
    fail('--trace tells one run: give it --seed S (the seed to replay)');
  // The model's clients hold no sessions to hand on: the flag would change nothing, silently.
  const plantedSdk =
    o.plant !== null && (PLANTED_BUGS[o.plant].config as { clients?: string }).clients === 'sdk';
  if (o.contexts && o.clients !== 'sdk' && !plantedSdk)
    fail(
      "--contexts hands context tokens between the SDK's client sessions: add --clients sdk (the default, model, has none)",
    );
  if (o.sharedContexts && o.clients !== 'sdk' && !plantedSdk)
    fail(
      "--shared-contexts runs ops of the SDK's client sessions in a shared context: add --clients sdk (the default, model, has none)",
    );
  return o;
}

/** The most processes `--jobs` starts: each holds a whole simulated cluster. */
const MAX_JOBS = 64;

function fail(message: string): never {
  console.error(`sim: ${message}`);
  process.exit(2);
}

/** Faults 'lag': what the lagging replica spent per op it caught up on (sim/catch-up.ts). */
function catchUpLine(c: SimResult['stats']['catchUp']): string {
  if (c === null) return '';
  const per = (n: number): string => (n / Math.max(1, c.ops)).toFixed(2);
  return `; replica ${c.replica} caught up on ${c.ops} ops with ${per(c.executions)} executions, ${per(c.lackChecks)} lack checks and ${per(c.messages)} messages per op`;
}

/** With the planted nondeterministic op: whether its effects differed, and how soon caught. */
function divergenceLine(d: SimResult['stats']['divergence']): string {
  if (d === undefined) return '';
  const caught =
    d.caughtAfterMs === null ? '' : `, caught ${d.caughtAfterMs.toFixed(0)} ms after its commit`;
  return `; planted nondeterministic ops: ${d.planted} committed, ${d.differed} left replicas differing${caught}`;
}

function leadershipLine(l: SimResult['stats']['leadership']): string {
  if (l === undefined) return '';
  return `; preferred leader ${l.preferred}${l.agreed ? '' : ' (settings disagree)'}: ${l.changes} leadership changes, ${l.finalLeader ?? 'nobody'} leads at the end${l.judged ? '' : ' (delays too long for the timers: not judged)'}`;
}

/** The flags and the visualizer query that name this run again. */
function replayFlags(seed: number, replicas: number, faults: FaultMode): string {
  return `--seed ${seed} --replicas ${replicas} --faults ${faults}${opts.storageFaults.length === 0 ? '' : ` --storage-faults ${opts.storageFaults.join(',')}`}${opts.clients === 'model' ? '' : ` --clients ${opts.clients}`}${opts.liveQueries ? ' --live-queries' : ''}${opts.contexts ? ' --contexts' : ''}${opts.sharedContexts ? ' --shared-contexts' : ''}${opts.quorumReads === null ? '' : ` --quorum-reads ${opts.quorumReads ? 'on' : 'off'}`}${opts.smr ? ' --smr' : ''}${opts.invariants ? ' --invariants' : ''}${opts.nondeterministic ? ' --nondeterministic' : ''}${opts.leaderPlacement ? ' --leader-placement' : ''}${opts.plant === null ? '' : ` --plant ${opts.plant}`}${opts.network === 'mix' ? '' : ` --network ${opts.network}`}`;
}
function replayQuery(seed: number, replicas: number, faults: FaultMode): string {
  return `?seed=${seed}&replicas=${replicas}&faults=${faults}${opts.plant === null ? '' : `&bug=${opts.plant}`}`;
}

/** On a WAN profile without loss: what the liveness checker judged of the strong ops. */
function livenessLine(l: SimResult['stats']['liveness']): string {
  if (l === null) return '';
  const slowest =
    l.strongOpsJudged === 0 ? '' : `, slowest decided in ${l.slowestMs.toFixed(0)} ms`;
  return `; ${l.strongOpsJudged} strong ops judged for liveness${slowest} (bound ${l.boundMs.toFixed(0)} ms)`;
}

/** ` (network global ×1.21)` for a run on a WAN profile; empty on uniform delays. */
function networkLabel(p: SimResult['parameters']): string {
  const wan = p.network.wan;
  return wan === undefined || wan === null
    ? ''
    : ` (network ${wan.profile}${wan.scale === 1 ? '' : ` ×${wan.scale}`})`;
}

/** A line to print: on stdout, or on stderr (`err`). */
interface Line {
  readonly err: boolean;
  readonly text: string;
}

/** What one seed's run prints: its JSON line, or its summary line (verbose or failed) and why. */
function report(r: SimResult, verbose: boolean, json: boolean): Line[] {
  const out: Line[] = [];
  const say = (text: string): number => out.push({ err: false, text });
  if (json) {
    const { seed, replicas, ok, violations, parameters, stats, committedOrder } = r;
    const faults = parameters.faults;
    const line = { seed, replicas, faults, ok, violations, parameters, stats, committedOrder };
    say(JSON.stringify(line));
    return out;
  }
  const s = r.stats;
  const sessions =
    s.sessions === undefined
      ? ''
      : `, client sessions: ${s.sessions.connections} connections (${s.sessions.failovers} to another replica), ${s.sessions.resets} links reset, ${s.sessions.timeouts} callers timed out, ${s.sessions.watchViews} live query views${s.sessions.handoffs === undefined ? '' : `, ${s.sessions.handoffs} context tokens handed on (${s.sessions.afterCalls ?? 0} to running clients)`}${s.sessions.contextOps === undefined ? '' : `, ${s.sessions.contextOps} ops in the shared context (${s.sessions.contextAcks ?? 0} acknowledged)`}`;
  const line = `seed ${r.seed} replicas ${r.replicas}${networkLabel(r.parameters)}: ${r.ok ? 'ok' : 'FAILED'} — ${s.ops} ops (${s.strongOps} strong), ${s.committed} committed, execution ratio ${s.executionRatio.toFixed(3)}, ${r.parameters.execution.speculative ? '' : 'no speculation, '}${r.parameters.quorumReads ? 'quorum reads, ' : ''}${r.parameters.execution.deferTurnMs === null ? '' : `executions a turn of ${r.parameters.execution.deferTurnMs} ms after their inputs, `}accuracy ${s.speculated === 0 ? '-' : ((100 * s.speculatedCorrectly) / s.speculated).toFixed(1) + '%'}, ${s.rollbacks} rollbacks, ${s.aheadExecutions} concurrent executions (${s.aheadConflicts} conflicts), ${s.mirrorExecutions} on a mirror (${s.staleMirrorReads} stale reads), ${s.partitions} partitions, ${s.crashes} crashes (${s.lost} for good, ${s.restartsFromCheckpoint} restarts from a checkpoint), ${s.wipes} disks lost (${s.wipedHalts} of those replicas halted), ${storageLine(s)}${s.transfers} state transfers (${s.transfersResumed} resumed after a crash), ${s.checkpoints} checkpoints (${s.truncatedRecords} records dropped), ${s.elections} elections, ${s.adopted} strong ops cast on behalf of their origin, ${s.resubmissions} resubmissions (${s.duplicatesCommitted} committed twice), ${s.abandons} ops abandoned by their clients (${s.abandoned} before they took effect), ${s.lackChecksPerOp.toFixed(1)} lack checks per op, ${s.messages} messages, ${Math.round(s.simulatedMs)} ms simulated${catchUpLine(s.catchUp)}${divergenceLine(s.divergence)}${livenessLine(s.liveness)}${leadershipLine(s.leadership)}${sessions}`;
  if (verbose || !r.ok) say(line);
  if (!r.ok) {
    say(`  parameters: ${JSON.stringify(r.parameters)}`);
    for (const v of r.violations.slice(0, 10)) say(`  ${v}`);
    if (r.violations.length > 10) say(`  ... and ${r.violations.length - 10} more`);
    say(
      `  replay: npm run sim -- ${replayFlags(r.seed, r.replicas, r.parameters.faults)} --verbose`,
    );
    // The visualizer replays runs of the model's clients, and planted bugs by name; it has no
    // switch for the planted op alone.
    // Nor storage faults but a planted bug's, nor WAN profiles.
    if (
      networkLabel(r.parameters) === '' &&
      opts.clients === 'model' &&
      (!opts.nondeterministic || opts.plant !== null) &&
      (opts.storageFaults.length === 0 || opts.plant !== null)
    )
      say(
        `  step through it: npm run visualizer, then open http://127.0.0.1:7300/${replayQuery(r.seed, r.replicas, r.parameters.faults)}`,
      );
  }
  return out;
}

/** One seed's run: its verdict, what it says of the run, and what to print. */
interface SeedOutcome {
  readonly seed: number;
  readonly ok: boolean;
  readonly wan: boolean;
  /** With a preferred leader (SimResult's stats.leadership), whether they agreed and were judged. */
  readonly leadership: { readonly agreed: boolean; readonly judged: boolean } | null;
  readonly lines: readonly Line[];
}

function runSeed(seed: number): SeedOutcome {
  let result: SimResult;
  try {
    result = runSimulation({
      seed,
      replicas: opts.replicas,
      faults: opts.faults,
      ...(opts.storageFaults.length === 0 ? {} : { storageFaults: opts.storageFaults }),
      ...(opts.clients === 'model' ? {} : { clients: opts.clients }),
      ...(opts.liveQueries ? { liveQueries: true } : {}),
      ...(opts.contexts ? { contexts: true } : {}),
      ...(opts.sharedContexts ? { sharedContexts: true } : {}),
      ...(opts.quorumReads === null ? {} : { quorumReads: opts.quorumReads }),
      ...(opts.smr ? { smr: true } : {}),
      ...(opts.invariants ? { invariants: true } : {}),
      ...(opts.nondeterministic ? { nondeterministic: true } : {}),
      network: opts.network,
      ...(opts.leaderPlacement ? { leaderPlacement: true } : {}),
      ...(opts.plant === null ? {} : PLANTED_BUGS[opts.plant].config),
      // On stderr: stdout keeps the verdict (and, with --json, its JSON line) alone.
      ...(opts.traceEveryMs === null
        ? {}
        : { trace: { everyMs: opts.traceEveryMs, line: (text: string) => console.error(text) } }),
    });
  } catch (err) {
    const lines = [
      `seed ${seed} replicas ${opts.replicas}: CRASHED — ${(err as Error).stack ?? String(err)}`,
      `  replay: npm run sim -- ${replayFlags(seed, opts.replicas, opts.faults)} --verbose`,
    ];
    return crashed(seed, lines);
  }
  const l = result.stats.leadership;
  return {
    seed,
    ok: result.ok,
    wan: networkLabel(result.parameters) !== '',
    leadership: l === undefined ? null : { agreed: l.agreed, judged: l.judged },
    lines: report(result, opts.verbose, opts.json),
  };
}

/** A seed whose run threw (or whose worker died): failed, `lines` saying so. */
function crashed(seed: number, lines: readonly string[]): SeedOutcome {
  return {
    seed,
    ok: false,
    wan: false,
    leadership: null,
    lines: lines.map((text) => ({ err: opts.json, text })),
  };
}

/** The counts the verdict gives, fed one seed's outcome at a time, in seed order. */
class Tally {
  passed = 0;
  failed = 0;
  /** Seeds run on a WAN profile. */
  onWan = 0;
  /** Runs whose replicas were given a preferred leader, and those of them given different ones. */
  placed = 0;
  disagreeing = 0;
  judged = 0;
  private done = 0;
  private readonly started = Date.now();

  constructor(private readonly total: number) {}

  add(o: SeedOutcome): void {
    if (o.ok) this.passed++;
    else this.failed++;
    if (o.wan) this.onWan++;
    if (o.leadership !== null) {
      this.placed++;
      if (!o.leadership.agreed) this.disagreeing++;
      if (o.leadership.judged) this.judged++;
    }
    for (const line of o.lines) (line.err ? console.error : console.log)(line.text);
    this.done++;
    if (!opts.verbose && this.total >= 100 && this.done % 100 === 0)
      (opts.json ? console.error : console.log)(
        `... ${this.done}/${this.total} seeds, ${this.failed} failed, ${((Date.now() - this.started) / 1000).toFixed(1)} s`,
      );
  }

  /** The closing lines, and the exit status. */
  finish(): never {
    const say = opts.json ? console.error : console.log;
    // A replay of one seed says it in the seed's line (with --verbose or when it fails).
    if (this.total > 1 && (opts.leaderPlacement || this.placed > 0))
      say(
        `sim: ${this.placed} runs with a preferred leader (${this.disagreeing} with disagreeing settings, ${this.judged} judged by the leadership checker)`,
      );
    // The verdict comes last.
    say(
      `sim: ${this.passed} passed, ${this.failed} failed${this.onWan === 0 ? '' : ` (${this.onWan} on a WAN profile)`}`,
    );
    process.exit(this.failed === 0 ? 0 : 1);
  }
}

/**
 * `--jobs N`: the seeds run in N processes of this command (`--worker`), each handed the next
 * seed as it finishes one, so a slow seed holds up one process only. The runs are the same as in
 * one process (each seed's run depends on its seed alone), and the output is too: each seed's
 * lines are printed in seed order, as they would be by one process.
 */
async function runInWorkers(seeds: readonly number[], jobs: number, tally: Tally): Promise<void> {
  const outcomes = new Map<number, SeedOutcome>();
  let next = 0;
  let printed = 0;
  const flush = (): void => {
    while (printed < seeds.length && outcomes.has(seeds[printed]!)) {
      tally.add(outcomes.get(seeds[printed]!)!);
      outcomes.delete(seeds[printed]!);
      printed++;
    }
  };
  const args = process.argv
    .slice(2)
    .filter((a, i, all) => a !== '--jobs' && all[i - 1] !== '--jobs');
  const one = (): Promise<void> =>
    new Promise((resolve) => {
      const child = fork(process.argv[1]!, [...args, '--worker'], {
        execArgv: process.execArgv,
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      let running: number | null = null;
      let problem: string | null = null;
      const give = (): void => {
        if (next < seeds.length && child.connected) {
          running = seeds[next++]!;
          child.send({ seed: running });
        } else {
          running = null;
          if (child.connected) child.disconnect();
        }
      };
      child.on('message', (m: unknown) => {
        const o = m as SeedOutcome;
        if (o.seed !== running) return;
        outcomes.set(o.seed, o);
        flush();
        give();
      });
      // A worker that could not start, or whose channel broke: its 'exit' below tells its seed.
      child.on('error', (err) => (problem = err.message));
      child.on('exit', (code, signal) => {
        // A worker that dies (out of memory, killed) fails the seed it ran; the others go on.
        const settle = (): void => {
          if (running !== null) {
            const seed = running;
            running = null;
            outcomes.set(
              seed,
              crashed(seed, [
                `seed ${seed} replicas ${opts.replicas}: CRASHED — its worker process ended (${problem ?? signal ?? `code ${code}`})`,
                `  replay: npm run sim -- ${replayFlags(seed, opts.replicas, opts.faults)} --verbose`,
              ]),
            );
            flush();
          }
          resolve();
        };
        // A message it sent before it ended may still be on its way: the channel's end comes last.
        if (child.connected) child.once('disconnect', settle);
        else settle();
      });
      give();
    });
  (opts.json ? console.error : console.log)(
    `sim: ${seeds.length} seeds in ${Math.min(jobs, seeds.length)} processes`,
  );
  await Promise.all(Array.from({ length: Math.min(jobs, seeds.length) }, one));
  // Seeds handed to no worker (every worker died): failed, not silently skipped.
  while (next < seeds.length) {
    const seed = seeds[next++]!;
    outcomes.set(
      seed,
      crashed(seed, [
        `seed ${seed} replicas ${opts.replicas}: NOT RUN — no worker process was left`,
      ]),
    );
  }
  flush();
}

const opts = parse(process.argv.slice(2));
if (opts.worker) {
  // A process of `--jobs`: runs each seed it is handed, and answers with its outcome.
  if (process.send === undefined)
    fail(
      '--worker is for the processes --jobs starts (it takes its seeds from them): use --jobs N',
    );
  process.on('message', (m: unknown) => process.send!(runSeed((m as { seed: number }).seed)));
  process.on('disconnect', () => process.exit(0));
} else {
  const seeds =
    opts.seed !== null ? [opts.seed] : Array.from({ length: opts.seeds }, (_, i) => opts.first + i);
  const tally = new Tally(seeds.length);
  if (opts.jobs > 1 && seeds.length > 1) await runInWorkers(seeds, opts.jobs, tally);
  else for (const seed of seeds) tally.add(runSeed(seed));
  tally.finish();
}
