import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalCluster } from '@creek/server/node';
import type { LostReplica } from './history.js';
import { describeStep, type Step } from './schedule.js';

/**
 * Carries out the schedule's faults on a cluster of real processes, one at a time, each healed
 * and the cluster serving again before the next: SIGKILL and restart, SIGSTOP and SIGCONT, the
 * replicas' own link blocking (/admin/block on both sides), a data directory wiped under a
 * killed replica, and a replica lost for good replaced by a new one (removed, then added, as
 * `creek member replace` does). With one fault at a time a majority always survives, so every
 * acknowledged op must too.
 */
export class Nemesis {
  /** Replicas whose next exit the nemesis caused (any other exit is a crash). */
  private readonly expectedExits = new Set<number>();
  readonly lost: LostReplica[] = [];
  /** Each fault carried out, in words, with when it started (ms since the run began). */
  readonly done: { at: number; what: string }[] = [];

  constructor(
    private readonly cluster: LocalCluster,
    private readonly now: () => number,
    private readonly log: (line: string) => void,
  ) {}

  /** Whether replica `i`'s exit was the nemesis's doing (and forgets it). */
  expectedExit(i: number): boolean {
    return this.expectedExits.delete(i);
  }

  /** Carries out one step, `faultMs` capped to `maxMs`; resolves once it is undone. */
  async apply(step: Step, maxMs: number): Promise<void> {
    const c = this.cluster;
    const target = await this.resolve(step);
    const faultMs = Math.max(500, Math.min(step.faultMs, maxMs));
    const what = `${describeStep({ ...step, faultMs })}: replica ${target}`;
    this.log(`nemesis: ${what}`);
    this.done.push({ at: this.now(), what });
    const others = c.members.filter((m) => m !== target);
    switch (step.kind) {
      case 'kill':
        this.expectedExits.add(target);
        await c.killed(target);
        await sleep(faultMs);
        c.startReplica(target);
        return;
      case 'freeze':
        c.signal(target, 'SIGSTOP');
        await sleep(faultMs);
        c.signal(target, 'SIGCONT');
        return;
      case 'partition':
        for (const peer of others) {
          await c.admin(target, 'block', { peer });
          await c.admin(peer, 'block', { peer: target });
        }
        await sleep(faultMs);
        for (const i of [target, ...others]) await c.admin(i, 'unblock');
        return;
      case 'wipe':
        this.expectedExits.add(target);
        await c.killed(target);
        this.lost.push({ replica: target, at: this.now(), how: 'wipe' });
        rmSync(join(c.dir, `replica-${target}`), { recursive: true, force: true });
        await sleep(faultMs);
        c.startReplica(target);
        return;
      case 'replace': {
        this.expectedExits.add(target);
        await c.killed(target);
        this.lost.push({ replica: target, at: this.now(), how: 'replace' });
        rmSync(join(c.dir, `replica-${target}`), { recursive: true, force: true });
        await sleep(faultMs);
        // A new member waits to hear every member, so the dead one goes first.
        await c.removeReplica(target);
        const added = await c.addReplica();
        this.log(`nemesis: replica ${added} replaces replica ${target}`);
        return;
      }
    }
  }

  /** Undoes whatever a fault that failed halfway left: frozen, cut off or stopped replicas. */
  async healAll(): Promise<void> {
    const c = this.cluster;
    for (const m of c.members) {
      if (!c.isRunning(m)) c.startReplica(m);
      else c.signal(m, 'SIGCONT');
    }
    for (const m of c.members) await c.admin(m, 'unblock').catch(() => undefined);
  }

  /**
   * Resolves once every member runs, answers, knows a leader and is done learning; throws after
   * `timeoutMs` (the cluster did not recover: a liveness failure the runner reports).
   */
  async healthy(timeoutMs: number): Promise<void> {
    const c = this.cluster;
    await c.until(
      async () =>
        c.members.every((m) => c.isRunning(m)) &&
        (await c.statuses()).every((s) => s !== null && s.leader !== null && !s.learning),
      timeoutMs,
      'every member serving again after the fault',
    );
  }

  /** The replica a step hits: the leader now, or the k-th of the others. */
  private async resolve(step: Step): Promise<number> {
    const c = this.cluster;
    let leader: number | null = null;
    for (let tries = 0; tries < 50 && leader === null; tries++) {
      const statuses = await c.statuses();
      const led = statuses.find((s) => s !== null && s.role === 'leader');
      leader = led === undefined || led === null ? null : led.id;
      if (leader === null) await sleep(100);
    }
    const members = [...c.members];
    if (step.target.role === 'leader' && leader !== null) return leader;
    const followers = members.filter((m) => m !== leader);
    const k = step.target.role === 'follower' ? step.target.k : 0;
    return followers[k % followers.length]!;
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
