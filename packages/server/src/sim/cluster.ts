import { formatOpId, opKey, slotOf, type OpId } from '@creek/replica/core/op-id.js';
import type { Req, Response } from '@creek/replica/core/types.js';
import type { DivergenceReport } from '@creek/replica/host/divergence.js';
import type { HostEvent, HostInput, Ready } from '@creek/replica/host/ready.js';
import type { PeerMessage } from '@creek/replica/host/peer-message.js';
import { lastCheckpoint, type HostRecord } from '@creek/replica/host/records.js';
import { ReplicaHost } from '@creek/replica/host/replica-host.js';
import type { SimClientSide } from './client-side.js';
import { SimDisk } from './disk.js';
import type { SimHostOptions } from './host-options.js';
import { SimNetwork } from './network.js';
import { PLANTED_OP } from './nondeterminism.js';
import { flipBit } from './record-damage.js';
import { takesOps, type SimMessage, type SimProcess } from './process.js';
import type { RunRecord } from './run-record.js';
import type { RunState } from './run-state.js';
import { callerText } from './users.js';
import { WATCH_TAG_BASE, type SimWatches } from './watches.js';

/** Simulated ms between two ticks of a replica. */
export const TICK_MS = 5;

/**
 * The simulated machines: a process per replica with its host and the disk that outlives it, the
 * network between them, and what happens to a process (spawn, crash, restart, a lost disk, loss
 * for good, departure once removed). The driver side of each host is here too: each input is a
 * host step, whose records go to the disk and whose messages and responses, released by the host
 * once the records before them are durable, go to the network and the clients.
 */
export class SimCluster {
  readonly network: SimNetwork<SimMessage>;
  /** Peer messages each replica handled. */
  readonly received: number[] = [];
  /**
   * Replicas that stopped for good (Ready.halted): every one is a violation. A crash loses
   * only writes that were not durable yet, and nothing leaves a replica before its writes are, so
   * a replica never finds its own ops at a peer that it lacks; and one whose disk was lost
   * ('wipe') has no origin until it has heard every peer, then takes a new one, and rebuilds
   * itself from a peer's checkpoint (state transfer) when its peers compacted what it lacks.
   */
  readonly halts: string[] = [];
  /** A transfer installed a committed position that no replica ever reached. */
  readonly transferViolations: string[] = [];
  /** Op ids written for two different ops: a replica that lost its disk numbered ops anew. */
  readonly reused: string[] = [];
  /** A removed replica that took client ops again (`checkStillLeaving`): one line per replica. */
  readonly tookOpsAgain: string[] = [];
  private readonly tookOpsAgainIds = new Set<number>();
  /** Per replica, the hold of speculation it is in now (RunRecord.holds). */
  private readonly openHold: (RunRecord['holds'][number] | undefined)[] = [];

  constructor(
    private readonly run: RunState,
    private readonly hostOptions: SimHostOptions,
    private readonly clients: SimClientSide,
    private readonly watches: SimWatches,
  ) {
    const procs = run.procs;
    this.network = new SimNetwork<SimMessage>(
      run.prngs.net,
      run.params.network,
      (at, fn) => run.events.push(at, fn),
      (t) => {
        // A replica added to the configuration may not run yet: nobody receives its messages.
        const p = procs[t.to];
        if (p === undefined || !p.up || procs[t.from]!.wipes !== t.msg.wipes) return;
        this.received[t.to] = (this.received[t.to] ?? 0) + 1;
        const message =
          run.config.unsafeDropGossipedUsers === true ? withoutUsers(t.msg.msg) : t.msg.msg;
        this.step(p, { kind: 'receive', from: t.from, message });
      },
      (node) => node,
      (node) => procs[node]?.up === true,
    );
    if (run.config.frames !== undefined) this.network.trackFlights();
  }

  /** A new replica process, with its host (`seeds`: whom it asks, for one added during the run). */
  spawn(id: number, seeds: readonly number[] | null): SimProcess {
    const p: SimProcess = {
      id,
      up: true,
      loseAfterStrong: false,
      incarnation: 0,
      wipes: 0,
      runScheduled: false,
      crashAfterRestart: null,
      opsOfLostDisks: new Set(),
      seeds,
      host: undefined as unknown as ReplicaHost,
      disk: this.newDisk(),
      tearNextWrite: false,
      durableAt: new Map(),
      live: null,
      clientsLeft: false,
      endpoint: null,
    };
    this.run.procs.push(p);
    p.host = new ReplicaHost(this.hostOptions.live(p));
    this.step(p, { kind: 'start' });
    this.clients.started(p);
    // A genesis replica's clients watch from the start; a new member's once it takes ops.
    if (seeds === null) this.watches.watchOn(p);
    return p;
  }

  /**
   * An empty disk: with storage faults in the run, one that keeps a checksum of each record (the
   * JSON of its fields, which is what a record says, whatever the runtime's codec makes of it).
   */
  private newDisk(): SimDisk<HostRecord> {
    return this.run.config.storageFaults?.length ? new SimDisk(encodeRecord) : new SimDisk();
  }

  /** One step of `p`'s host, and what its Ready asks for (`consume`). */
  step(p: SimProcess, input: HostInput): void {
    this.consume(p, p.host.step(input));
  }

  /**
   * The driver side of a host: its records go to the disk; the host is told that a record its
   * messages or responses wait for is durable (a `durable` step) once the disk has it, which
   * releases them; what it released goes to the network and the clients; its events are acted on.
   */
  private consume(p: SimProcess, ready: Ready): void {
    const run = this.run;
    const host = p.host;
    for (const [k, rec] of ready.records.entries())
      p.durableAt.set(ready.firstSeq + k, this.persist(p, rec));
    for (const o of ready.outputs)
      if (o.kind === 'send')
        this.network.send(run.now, p.id, o.to, { msg: o.msg, wipes: p.wipes }, false);
      else this.respond(p, o.response);
    for (const e of ready.events) this.observe(p, e);
    if (ready.halted !== null) this.halt(p, ready.halted);
    // When each record an output waits for is durable; then only the last record written can be
    // waited for by a later step.
    const waits = ready.waits.map((seq) => ({ seq, at: p.durableAt.get(seq)! }));
    const last = ready.firstSeq + ready.records.length - 1;
    for (const seq of p.durableAt.keys()) if (seq < last) p.durableAt.delete(seq);
    for (const { seq, at } of waits) {
      // The planted bug tells the host at once, so that it releases before the writes are durable.
      if (at <= run.now || run.config.unsafeSendBeforeDurable)
        this.step(p, { kind: 'durable', upTo: seq });
      else
        run.events.push(at, () => {
          if (p.up && p.host === host) this.step(p, { kind: 'durable', upTo: seq });
        });
    }
  }

  private halt(p: SimProcess, reason: string): void {
    const run = this.run;
    this.halts.push(`halt: at ${run.now.toFixed(1)} ms: replica ${p.id}: ${reason}`);
    run.trace(`replica ${p.id} halts: ${reason}`);
    if (p.wipes > 0) run.counts.wipedHalts++;
    // Taken down by its operator, as `creek start` exits: lost for good from here on.
    run.events.push(run.now, () => {
      this.loseForGood(p);
    });
  }

  private observe(p: SimProcess, e: HostEvent): void {
    const run = this.run;
    const record = run.record;
    if (e.kind === 'removed') {
      // It stops, as `creek start` exits: gone for good, its origin with it.
      run.events.push(run.now, () => {
        run.trace(`replica ${p.id} is told it is no longer needed: it stops`);
        if (p.clientsLeft && p.up) {
          // Departed already (`depart`): it only goes down now.
          run.counts.removed++;
          this.crash(p);
        } else if (!record.lost.includes(p.id)) {
          run.counts.removed++;
          this.loseForGood(p);
        }
      });
      return;
    }
    if (e.kind === 'divergence') return this.diverged(p, e.report);
    if (e.kind === 'invariantBroken') {
      record.invariantReports.push({ at: run.now, replica: p.id, violation: e.violation });
      return;
    }
    if (e.kind !== 'transferred') return;
    // Its clients watch again once it takes ops (a rebuilding replica takes none, so in the
    // runtime they could not watch it meanwhile): the state was replaced wholesale.
    this.watches.forget(p);
    // Its committed list is now a peer's, up to the checkpoint's position: the checkers
    // compare what it commits from here on with the others' lists.
    run.counts.transfers++;
    record.commits[p.id] = this.transferredPrefix(e.committed, p.id);
  }

  /**
   * `p` reports a divergence (host/divergence.ts). Left without a majority's state, it takes no
   * client op (`takesOps`) and its clients take theirs elsewhere, as the runtime's do when it turns
   * them away.
   */
  private diverged(p: SimProcess, report: DivergenceReport | null): void {
    const run = this.run;
    run.record.divergences.push({ at: run.now, replica: p.id, report });
    run.trace(`replica ${p.id}: ${report === null ? 'divergence over' : report.reason}`);
    if (report === null || report.servesStable) return;
    // Its clients leave it as they leave a removed replica.
    run.events.push(run.now, () => this.clients.departed(p));
  }

  /** Writes a record to `p`'s disk; returns when it will be durable. */
  private persist(p: SimProcess, rec: HostRecord): number {
    const run = this.run;
    const record = run.record;
    const at = p.disk.write(
      run.now,
      run.prngs.disk.float(0, run.params.diskLatencyMs),
      rec,
      rec.layer === 'checkpoint',
    );
    if (rec.layer === 'checkpoint') run.counts.checkpoints++;
    if (p.tearNextWrite) {
      // Storage fault 'torn': the power goes while this write is under way (`damage`).
      p.tearNextWrite = false;
      run.events.push(run.now, () => this.powerLoss(p, true));
    }
    if (rec.layer !== 'core') return at;
    if (rec.record.kind === 'commit') {
      record.commits[p.id]!.push([...rec.record.ids]);
      if (run.config.nondeterministic === true)
        for (const id of rec.record.ids) {
          const key = opKey(id);
          if (record.reqs.get(key)?.op === PLANTED_OP && !record.plantedCommittedAt.has(key))
            record.plantedCommittedAt.set(key, run.now);
        }
      return at;
    }
    const req = rec.record.req;
    const before = record.reqs.get(opKey(req.id));
    if (before !== undefined && (before.ts !== req.ts || before.op !== req.op))
      this.reused.push(
        `op id reused: at ${run.now.toFixed(1)} ms replica ${p.id} wrote ${formatOpId(req.id)} as ${req.op} at ${req.ts}, which is ${before.op} at ${before.ts} elsewhere`,
      );
    record.reqs.set(opKey(req.id), req);
    run.callers.saw(req.id, req.ts, req.op, `replica ${p.id}'s copy`, callerText(req.user));
    return at;
  }

  /** A response the host released (its records are durable): to the client that waits for it. */
  private respond(p: SimProcess, o: Response): void {
    if (o.tag >= WATCH_TAG_BASE) {
      // As the runtime does: handled after the host's turn, not inside it.
      const live = p.live;
      this.run.events.push(this.run.now, () => void live?.respond(o));
      return;
    }
    this.clients.respond(p, o);
  }

  /**
   * The first `count` committed ops, in their commit groups, from any replica's list that is that
   * long (the lists are prefixes of one another: checkAgreement). None: a violation.
   */
  private transferredPrefix(count: number, to: number): OpId[][] {
    const record = this.run.record;
    const lists = [
      ...record.commits.filter((_, i) => i !== to),
      ...record.retired.map((r) => r.commits),
    ];
    const from = lists.find((l) => l.reduce((n, g) => n + g.length, 0) >= count);
    if (from === undefined) {
      this.transferViolations.push(
        `transfer: at ${this.run.now.toFixed(1)} ms replica ${to} installed a checkpoint of ${count} committed ops, which no replica committed`,
      );
      return [];
    }
    return commitPrefix(from, count, to);
  }

  /** The replica crashes and never comes back; its origin is dead. */
  loseForGood(h: SimProcess): void {
    const record = this.run.record;
    this.run.trace(`replica ${h.id} is gone for good`);
    const origin = h.host.origin;
    this.crash(h);
    if (!record.lost.includes(h.id)) record.lost.push(h.id);
    if (origin >= 0) record.deadOrigins.push(origin);
  }

  /**
   * The replica's process crashes. With storage faults 'power-loss' in the run, a crash is of the
   * process alone and keeps the writes it had issued (`powerLoss` is the other kind); without, every
   * crash loses what was not durable yet, as a power loss does.
   */
  crash(h: SimProcess): void {
    this.crashAs(h, this.run.config.storageFaults?.includes('power-loss') ? 'process' : 'power');
  }

  /**
   * Storage faults 'power-loss' and 'torn': the replica's machine loses power. The writes not yet
   * durable are lost, and with `tear` the first of them is on the disk in part.
   */
  powerLoss(h: SimProcess, tear = false): void {
    if (!h.up) return;
    const run = this.run;
    const prng = run.prngs.named('storage');
    run.counts.powerLosses++;
    run.trace(`replica ${h.id}'s machine loses power${tear ? ' in the middle of a write' : ''}`);
    this.crashAs(
      h,
      'power',
      tear
        ? (r) => {
            run.counts.tornWrites++;
            return flipBit(r, prng);
          }
        : undefined,
    );
  }

  private crashAs(
    h: SimProcess,
    how: 'power' | 'process',
    tear?: (r: HostRecord) => HostRecord,
  ): void {
    const run = this.run;
    const record = run.record;
    if (!h.up) return;
    run.trace(`replica ${h.id} crashes`);
    run.counts.crashes++;
    h.up = false;
    h.incarnation++;
    h.tearNextWrite = false;
    run.counts.lostWrites += h.disk.crash(run.now, how, tear);
    // What survives is what the disk holds: the last durable checkpoint and the records after it
    // (a torn write is not among them: it never completed).
    const { checkpoint, tail } = lastCheckpoint(h.disk.readWhole());
    // Ops whose Req write the crash lost were never sent anywhere: they do not exist (and their
    // ids will be reused). A durable checkpoint covers every op its replica had issued.
    const survived = new Set(
      tail.flatMap((r) =>
        r.layer === 'core' && r.record.kind === 'req' ? [opKey(r.record.req.id)] : [],
      ),
    );
    const issuedBefore = checkpoint?.core.eventNo ?? 0;
    const origin = h.host.origin; // its own ops' origin (-1 while it has none: no own ops)
    const unwritten = [...record.reqs].filter(
      ([key, req]) =>
        req.id.replica === origin &&
        req.id.eventNo > issuedBefore &&
        !survived.has(key) &&
        !h.opsOfLostDisks.has(key),
    );
    // Unless one left all the same: a driver that sends and answers before its writes are durable
    // (the planted unsafeSendBeforeDurable) lets a Req reach peers, which may commit it, and lets
    // answers that depend on it reach clients. Such a Req exists: it stays in the record, for the
    // checkers to replay and for a reuse of its id to be caught. (Dropped, it left them a committed
    // op, or an answer, without its Req.)
    if (unwritten.length > 0) {
      const answered = answeredOn(record, h);
      const holders = run.procs.filter((q) => q !== h).map((q) => this.holdsOps(q));
      for (const [key, req] of unwritten)
        if (!answered.has(key) && !holders.some((has) => has(req.id))) record.reqs.delete(key);
    }
    // The commit records that survived: those the checkpoint counts, then those after it.
    let committed =
      checkpoint === undefined ? 0 : checkpoint.core.finalized + checkpoint.core.committedLive;
    for (const r of tail)
      if (r.layer === 'core' && r.record.kind === 'commit') committed += r.record.ids.length;
    record.commits[h.id] = commitPrefix(record.commits[h.id]!, committed, h.id);
    this.clients.crashed(h);
  }

  /**
   * A membership change removed `p` (ReplicaHost.leaving): it takes no client op (`takesOps`) and
   * issues none, and its clients take theirs elsewhere, as the runtime's do when it answers
   * `unavailable`. It stays up as an acceptor (restarted after a crash) until told it is no longer
   * needed; the checkers hold it to nothing from here on, as a replica lost for good: it learns no
   * more, and its origin issues nothing more.
   */
  private depart(p: SimProcess): void {
    const record = this.run.record;
    this.run.trace(
      `replica ${p.id} has its removal in force: it takes no client op, and its clients leave`,
    );
    p.clientsLeft = true;
    this.clients.departed(p);
    if (!record.lost.includes(p.id)) record.lost.push(p.id);
    if (!record.removed.includes(p.id)) record.removed.push(p.id);
    const origin = p.host.origin;
    if (origin >= 0 && !record.deadOrigins.includes(origin)) record.deadOrigins.push(origin);
  }

  /**
   * The replica's disk is lost (a wiped or replaced data directory): it crashes, and restarts on an
   * empty one. Its ops that no other replica holds are gone, and their ids may be used again; its
   * commit list and the responses it gave before are checked as those of a replica of their own
   * (RunRecord.retired).
   */
  wipe(h: SimProcess): void {
    const record = this.run.record;
    if (!h.up || record.lost.includes(h.id)) return;
    this.run.trace(`replica ${h.id} loses its disk`);
    this.crash(h);
    this.run.counts.wipes++;
    this.loseDisk(h);
  }

  /**
   * What a lost disk costs a replica that is down (`wipe`, or one that found its disk damaged when
   * it restarted): it will restart on an empty one.
   */
  private loseDisk(h: SimProcess): void {
    const record = this.run.record;
    // The incarnation it ran under never issues again (a wiped replica takes a new one).
    if (h.host.origin >= 0) record.deadOrigins.push(h.host.origin);
    const holders = this.run.procs
      .filter((q) => q !== h && !record.lost.includes(q.id))
      .map((q) => this.holdsOps(q));
    const lostReqs = new Map<string, Req>();
    for (const [key, req] of record.reqs) {
      if (slotOf(req.id.replica) !== h.id) continue;
      if (holders.some((has) => has(req.id))) {
        h.opsOfLostDisks.add(key);
      } else {
        lostReqs.set(key, req);
        record.reqs.delete(key);
      }
    }
    record.retired.push({ replica: h.id, disk: h.wipes, commits: record.commits[h.id]!, lostReqs });
    h.wipes++;
    h.disk = this.newDisk();
    record.commits[h.id] = [];
  }

  /**
   * Storage faults 'torn', 'corrupt' and 'stale' (faults.ts): the replica crashes, and its disk is
   * damaged. Torn: the power goes at its next write, which is left in part on the disk. Corrupt: a
   * bit of one of its records flips while it is down. Stale: one of its records reads back as the
   * older version of it that a checkpoint replaced.
   */
  damage(h: SimProcess, fault: 'torn' | 'corrupt' | 'stale'): void {
    const run = this.run;
    if (!h.up || run.record.lost.includes(h.id)) return;
    if (fault === 'torn') {
      h.tearNextWrite = true;
      return;
    }
    this.crash(h);
    const prng = run.prngs.named('storage');
    if (fault === 'corrupt') {
      if (h.disk.size === 0) return;
      const at = prng.int(0, h.disk.size - 1);
      h.disk.corrupt(at, (r) => flipBit(r, prng));
      run.counts.corruptRecords++;
      run.trace(`a bit of record ${at + 1} on replica ${h.id}'s disk flips`);
      return;
    }
    const stale = h.disk.stalePositions();
    if (stale.length === 0) return;
    const at = prng.pick(stale);
    h.disk.stale(at);
    run.counts.staleRecords++;
    run.trace(`record ${at + 1} on replica ${h.id}'s disk reads back as an older version of it`);
  }

  /**
   * What `p` restarts from: the records on its disk, unless one is damaged (a checksum that does
   * not match, SimDisk.load). Then it uses none of them, as the runtime's storage refuses a corrupt
   * row: what the damaged record held may be a promise or a vote its peers relied on, so it cannot
   * go on as if it had the rest, and rebuilds itself from its peers as a replica whose disk was
   * lost does. (The planted bug `ignore-checksums` reads every record as it comes.)
   */
  private recoverFrom(p: SimProcess): HostRecord[] {
    const run = this.run;
    const { records, damage } = p.disk.load(run.config.unsafeIgnoreChecksums !== true);
    if (damage === null) return records;
    run.counts.damagedDisks++;
    run.trace(`replica ${p.id} finds its disk damaged (${damage}): it rebuilds from its peers`);
    this.loseDisk(p);
    return [];
  }

  /** Whether `q` has an op: in memory if it is up, else on its disk (what it will restart with). */
  private holdsOps(q: SimProcess): (id: OpId) => boolean {
    if (q.up) return (id) => q.host.clients.hasReceived(id);
    let recovered: ReplicaHost;
    try {
      recovered = new ReplicaHost(this.hostOptions.of(q.id), {
        records:
          q.disk.load(this.run.config.unsafeIgnoreChecksums !== true).damage === null
            ? q.disk.read()
            : [],
        nowMs: this.run.physical(q.id),
      });
    } catch {
      // Its disk makes no replica (its records contradict one another, as planted bugs leave
      // them): it halts when it restarts, and gives nothing to anyone.
      return () => false;
    }
    return (id) => recovered.clients.hasReceived(id);
  }

  restart(p: SimProcess): void {
    const run = this.run;
    const record = run.record;
    // A departed replica (`depart`) is still an acceptor, until told it is no longer needed.
    if (p.up || (record.lost.includes(p.id) && !(p.clientsLeft && p.host.halted === null))) return;
    run.trace(`replica ${p.id} restarts`);
    const records = this.recoverFrom(p);
    let host: ReplicaHost;
    try {
      host = new ReplicaHost(this.hostOptions.live(p), { records, nowMs: run.physical(p.id) });
    } catch (err) {
      // What its disk holds makes no replica (its records contradict one another): the process
      // exits as `creek start` does, and never comes back.
      this.halt(p, `cannot recover from its disk: ${(err as Error).message}`);
      return;
    }
    p.up = true;
    if (records.some((r) => r.layer === 'checkpoint')) run.counts.restartsFromCheckpoint++;
    this.countPaxos(p);
    // A new host numbers its records from 1 again.
    p.durableAt.clear();
    p.host = host;
    // What the last process knew of a divergence died with it; what its disk kept comes back.
    if (run.config.nondeterministic === true)
      record.divergences.push({ at: run.now, replica: p.id, report: null });
    this.step(p, { kind: 'start' });
    this.clients.started(p);
    // It crashed while it rebuilt itself: it goes on from the chunks on its disk.
    if (p.host.rebuilding) run.counts.transfersResumed++;
    // A member added during the run is watched once it takes ops (its clients could not before).
    if (p.seeds === null) this.watches.watchOn(p);
    else this.watches.forget(p);
    const again = p.crashAfterRestart;
    if (again === null) return;
    p.crashAfterRestart = null;
    run.events.push(run.now + again.afterMs, () => {
      if (!p.up || p.host.halted !== null) return;
      this.crash(p);
      run.events.push(run.now + again.downMs, () => this.restart(p));
    });
  }

  /**
   * Adds the Paxos counters of `p`'s current host to the run's (SimCounts.backstopHits,
   * lackChecks): before a restart replaces the host, and for every host at the end.
   */
  countPaxos(p: SimProcess): void {
    const counts = this.run.counts;
    // Paxos's own counters of its work, which the checkers bound: read inside the host.
    const paxos = p.host.inspect().paxos.status();
    counts.backstopHits += paxos.backstopHits;
    counts.lackChecks[p.id] = (counts.lackChecks[p.id] ?? 0) + paxos.lackChecks;
  }

  /** The process's ticks, the first at `firstAt`, then every TICK_MS. */
  startTicks(p: SimProcess, firstAt: number): void {
    const run = this.run;
    const tick = (): void => {
      if (p.up) this.step(p, { kind: 'tick', now: run.physical(p.id) });
      run.leadership.ticked(p);
      if (p.up && p.host.leaving && !p.clientsLeft) this.depart(p);
      if (p.clientsLeft) this.checkStillLeaving(p);
      run.events.push(run.now + TICK_MS, tick);
    };
    run.events.push(firstAt, tick);
  }

  /**
   * `p` departed (`depart`: it knew it was removed) and stays an acceptor until told it is no
   * longer needed, restarts included: all that while it must take no client op (ReplicaHost.
   * leaving). Ops it took would be ordered by nobody but a member adopting their strong ones, one
   * at a time, for its origin is dead to the checkers and ignored by the members.
   */
  private checkStillLeaving(p: SimProcess): void {
    if (!takesOps(p) || this.tookOpsAgainIds.has(p.id)) return;
    // Judged by what it knows now: a replica that crashed before the change that removed it was
    // on its disk came back not knowing it, as if it had never heard (seed 2131112540 with 3
    // replicas, reconfig faults: it departed 1.6 ms before a crash). One that knows it (on its
    // disk, or told by a member) and takes client ops is what this catches (leave-only-in-force).
    if (!p.host.inspect().paxos.retiring) return;
    this.tookOpsAgainIds.add(p.id);
    const line = `removal: at ${this.run.now.toFixed(1)} ms replica ${p.id}, which knew it was removed (its clients left it), takes client ops again`;
    this.tookOpsAgain.push(line);
    this.run.trace(line);
  }

  /** A replica whose inputs wait for their executions runs them one turn later. */
  scheduleDeferredRuns(): void {
    const run = this.run;
    const turn = run.params.execution.deferTurnMs;
    if (turn === null) return;
    for (const p of run.procs) {
      if (!p.up || p.runScheduled || !p.host.executionDue) continue;
      p.runScheduled = true;
      const host = p.host;
      run.events.push(run.now + turn, () => {
        p.runScheduled = false;
        if (p.up && p.host === host) this.step(p, { kind: 'run' });
      });
    }
  }

  /** Records when each replica starts and stops holding speculation (RunRecord.holds). */
  trackHolds(): void {
    const run = this.run;
    for (const p of run.procs) {
      const held = p.up && p.host.speculationHeld;
      const open = this.openHold[p.id];
      if (held && open === undefined) {
        const h = { replica: p.id, start: run.now, end: Number.POSITIVE_INFINITY };
        run.record.holds.push(h);
        this.openHold[p.id] = h;
      } else if (!held && open !== undefined) {
        open.end = run.now;
        this.openHold[p.id] = undefined;
      }
    }
  }
}

/** A record's fields as the simulated disk checksums them (SimDisk's `encode`). */
function encodeRecord(r: HostRecord): string {
  return JSON.stringify(r);
}

/** The first commit records of `groups` that hold `count` ids in all (a crash keeps a prefix). */
function commitPrefix(groups: OpId[][], count: number, replica: number): OpId[][] {
  let total = 0;
  let g = 0;
  while (g < groups.length && total < count) total += groups[g++]!.length;
  if (total !== count)
    throw new Error(
      `replica ${replica}: its disk holds ${count} committed ops, not a prefix of the ${groups.flat().length} it wrote`,
    );
  return groups.slice(0, g);
}

/**
 * The planted bug `drop-gossiped-users` (SimConfig.unsafeDropGossipedUsers): the caller
 * (`Req.user`) is stripped from every Req a gossip push carries, so receivers run other replicas'
 * ops as anonymous.
 */
function withoutUsers(message: PeerMessage): PeerMessage {
  if (message.kind !== 'gossip' || message.msg.kind !== 'push') return message;
  return {
    ...message,
    msg: { ...message.msg, reqs: message.msg.reqs.map(({ user: _, ...req }) => req) },
  };
}

/**
 * The ops that answers given on `p`'s current disk name (RunRecord.invocations): those answered,
 * and those their order traces held. Each answer waits for the writes before it to be durable,
 * unless the driver is broken.
 */
function answeredOn(record: RunRecord, p: SimProcess): Set<string> {
  const out = new Set<string>();
  for (const inv of record.invocations) {
    if (inv.replica !== p.id || (inv.disk ?? 0) !== p.wipes) continue;
    if (inv.id !== null) out.add(opKey(inv.id));
    for (const r of inv.responses)
      for (const id of r.trace?.tentativeBefore ?? []) out.add(opKey(id));
  }
  return out;
}
