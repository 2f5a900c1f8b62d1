import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReplicaStatus } from '@creek/protocol';
import { LocalCluster } from '../../src/node/local-cluster.js';

/**
 * A replica that cannot make progress says why (HostStatus.waiting) in /status, /ready and its
 * log, on real processes: one replica killed, another killed, its data directory removed and
 * started again while the first is still down. The wiped one learns nothing until it hears the
 * missing peer; the third hears only a replica that cannot vote yet, so nothing commits.
 */
describe('a stuck replica says what it waits for', () => {
  let cluster: LocalCluster | undefined;
  afterEach(async () => {
    await cluster?.stop();
    cluster = undefined;
  });

  it('in /status, /ready and its log, and says when it goes on', async () => {
    const logs: string[][] = [[], [], []];
    cluster = await LocalCluster.start({
      replicas: 3,
      logLevel: 'info',
      onLog: (replica, line) => logs[replica]?.push(line),
    });
    const c = cluster;
    await c.waitForLeader();
    await c.converged();
    // The leader, read once every replica reports one (an election may still be settling).
    let survivor = -1;
    await c.until(
      async () => {
        survivor = (await c.statuses()).findIndex((s) => s?.role === 'leader');
        return survivor >= 0;
      },
      30_000,
      'a replica reports that it leads',
    );
    const [a, b] = [0, 1, 2].filter((i) => i !== survivor) as [number, number];
    await c.killed(a);
    await c.killed(b);
    rmSync(join(c.dir, `replica-${b}`), { recursive: true, force: true });
    const startedAt = Date.now();
    c.startReplica(b);
    const waitingAt = async (i: number): Promise<ReplicaStatus['waiting']> =>
      (await c.status(i))?.waiting ?? null;
    // Read in the same poll that finds it: what it waits for may change between two reads.
    let wiped: NonNullable<ReplicaStatus['waiting']> | null = null;
    await c.until(
      async () => {
        const w = await waitingAt(b);
        // The survivor's summary comes within moments; the missing replica's never.
        if (w?.for === 'peer-summaries' && w.peers.length === 1) wiped = w;
        return wiped !== null;
      },
      30_000,
      `replica ${b} waits for the missing replica's summary`,
    );
    wiped = wiped!;
    expect(wiped.peers).toEqual([a]);
    expect(wiped.reason).toContain(`summary from replica ${a}`);
    // Not ready, and the probe says why without JSON parsing; the body has the details.
    const ready = await fetch(`${c.httpUrl(b)}/ready`);
    expect(ready.status).toBe(503);
    const body = (await ready.json()) as { reason: string; waiting: ReplicaStatus['waiting'] };
    expect(body.reason).toContain(`Waiting for peer-summaries (replicas ${a})`);
    expect(body.waiting).toMatchObject({ for: 'peer-summaries', peers: [a] });
    // The survivor (leading, or running for leader again) is the only member that can vote: it
    // says nothing commits, and why.
    await c.until(
      async () => (await waitingAt(survivor))?.for === 'votes',
      30_000,
      `replica ${survivor} says too few members can vote`,
    );
    const votes = (await waitingAt(survivor))!;
    expect(votes.peers).toEqual([a, b].sort());
    expect(votes.reason).toContain('nothing commits');
    expect(votes.reason).toContain('Only 1 of the 3 members can vote now');
    expect((await fetch(`${c.httpUrl(survivor)}/ready`)).status).toBe(200);
    // The log says it once the wait has lasted a moment, not every tick.
    const waitLines = (i: number): { peers: number[]; waitingFor: string }[] =>
      logs[i]!.flatMap((line) => {
        const entry = JSON.parse(line) as { msg?: string; peers?: number[]; waitingFor?: string };
        return entry.msg?.startsWith('cannot make progress') === true
          ? [{ peers: entry.peers ?? [], waitingFor: entry.waitingFor ?? '' }]
          : [];
      });
    // On a loaded machine the first line may come before the survivor's summary (waiting for both
    // peers); the line for the missing one alone follows when the peers change.
    await c.until(
      async () =>
        waitLines(b).some(
          (l) => l.waitingFor === 'peer-summaries' && l.peers.length === 1 && l.peers[0] === a,
        ),
      30_000,
      `replica ${b} logs that it waits for replica ${a}`,
    );
    expect(waitLines(b)).toContainEqual({ peers: [a], waitingFor: 'peer-summaries' });
    await c.until(
      async () => waitLines(survivor).some((l) => l.waitingFor === 'votes'),
      30_000,
      `replica ${survivor} logs that too few can vote`,
    );
    // The missing replica is back: both go on, and say so.
    c.startReplica(a);
    await c.until(
      async () => {
        const s = await c.statuses();
        return s.every((x) => x !== null && x.waiting === null && !x.learning);
      },
      60_000,
      'every replica goes on',
    );
    await c.until(
      async () => logs[b]!.some((l) => l.includes('no longer waiting')),
      30_000,
      `replica ${b} logs that it goes on`,
    );
    // A line per change and per 30 s of the same wait, not one per 25 ms tick.
    const minutes = (Date.now() - startedAt) / 30_000;
    expect(waitLines(b).length).toBeLessThanOrEqual(2 * (2 + Math.floor(minutes)));
    expect((await fetch(`${c.httpUrl(b)}/ready`)).status).toBe(200);
  });
});
