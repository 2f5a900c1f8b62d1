import { beforeAll, describe, expect, it } from 'vitest';
import type { ReplicaCheckpoint } from '@creek/replica/core/checkpoint.js';
import { formatOpId } from '@creek/replica/core/op-id.js';
import { Replica } from '@creek/replica/core/replica.js';
import type { DurableRecord, ExecutionResult, Output } from '@creek/replica/core/types.js';
import { InlineExecutor } from '@creek/replica/exec/inline-executor.js';
import type { HostRecord } from '@creek/replica/host/records.js';
import { app, HostCluster } from './host-cluster.js';

const options = { id: 0, app, noopIntervalMs: 50 };
const NOW = 1_800_000_000_000;

function coreRecords(records: readonly HostRecord[]): DurableRecord[] {
  return records.flatMap((r) => (r.layer === 'core' ? [r.record] : []));
}

const executor = new InlineExecutor(app);

/** Recovers replica 0, running the executions it asks for; returns it and everything it output. */
function recover(
  records: DurableRecord[],
  checkpoint?: ReplicaCheckpoint,
): { replica: Replica; outputs: Output[] } {
  const { replica, outputs } = Replica.recover(options, records, NOW, checkpoint);
  for (let i = 0; i < outputs.length; i++) {
    const o = outputs[i]!;
    if (o.type === 'execute')
      outputs.push(...replica.executed(executor.execute(o.job) as ExecutionResult));
  }
  return { replica, outputs };
}

/** What recovery made the replica say: its re-gossip and CAB re-casts, in order. */
function recoveryOutputs(outputs: Output[]): string[] {
  return outputs.flatMap((o) =>
    o.type === 'rbCast'
      ? [`rb ${formatOpId(o.req.id)}`]
      : o.type === 'cabCast'
        ? [`cab ${formatOpId(o.id)} after #${o.prevStrong}`]
        : o.type === 'respond'
          ? [`respond ${o.tag}`]
          : [],
  );
}

/** Everything observable about a recovered replica, and what it would write in a checkpoint. */
function describeReplica(r: Replica, outputs: Output[]) {
  const c = r.checkpoint();
  // The peak is history, not state.
  const { peakVersions: _, ...stats } = r.stats();
  return {
    stateJson: r.stateJson(),
    digest: r.stateDigest(),
    stats,
    tentative: r.tentativeIds(),
    outputs: recoveryOutputs(outputs),
    known: c.known.toJSON(),
    eventNo: c.eventNo,
    lastStrongEventNo: c.lastStrongEventNo,
    finalizedOwnStrong: c.finalizedOwnStrong,
    reqs: c.reqs.map((q) => formatOpId(q.id)),
    committedLive: c.committedLive,
    state: c.state,
  };
}

/**
 * Replica 0 of a 3-replica cluster under load, cut off from the others now and then while it keeps
 * invoking ops (so its checkpoints hold tentative ops and strong ops of its own waiting for CAB
 * behind final ones), checkpointing every 25 final ops and at times of its own choosing.
 */
function historyOfReplica0(): HostRecord[] {
  const c = new HostCluster(3, 7, { checkpointEvery: 25 });
  for (let round = 0; round < 6; round++) {
    c.workload(120, { keys: 12, strongEvery: 9 });
    c.run(100);
    c.isolated.add(0);
    c.workload(30, { keys: 12, strongEvery: 5, at: [0] });
    c.apply(0, { kind: 'checkpoint' });
    c.workload(10, { keys: 12, strongEvery: 3, at: [0] });
    c.isolated.delete(0);
    c.run(40);
  }
  c.settle();
  return c.nodes[0]!.log;
}

describe('checkpoints: recovery from a checkpoint equals recovery from every record', () => {
  let log: HostRecord[] = [];
  let checkpoints: number[] = [];
  beforeAll(() => {
    log = historyOfReplica0();
    checkpoints = log.flatMap((r, i) => (r.layer === 'checkpoint' ? [i] : []));
  });

  it('the history has checkpoints with tentative ops and pending own strong ops', () => {
    expect(checkpoints.length).toBeGreaterThan(10);
    const cores = checkpoints.map(
      (i) => (log[i] as Extract<HostRecord, { layer: 'checkpoint' }>).record.core,
    );
    expect(cores.some((c) => c.reqs.length > c.committedLive)).toBe(true);
    // An own strong op not final, behind an own strong op that is: its prevStrong comes from the
    // checkpoint alone.
    expect(
      cores.some(
        (c) => c.finalizedOwnStrong > 0 && c.reqs.some((q) => q.strong && q.id.replica === 0),
      ),
    ).toBe(true);
  });

  it('gives the same replica at every crash point after every checkpoint', () => {
    let compared = 0;
    checkpoints.forEach((at, k) => {
      const next = checkpoints[k + 1] ?? log.length;
      const checkpoint = (log[at] as Extract<HostRecord, { layer: 'checkpoint' }>).record.core;
      // Crash right after the checkpoint, halfway to the next one, and just before it.
      for (const end of new Set([at + 1, Math.floor((at + 1 + next) / 2), next])) {
        const all = recover(coreRecords(log.slice(0, end)));
        const fromCheckpoint = recover(coreRecords(log.slice(at + 1, end)), checkpoint);
        expect(describeReplica(fromCheckpoint.replica, fromCheckpoint.outputs)).toEqual(
          describeReplica(all.replica, all.outputs),
        );
        compared++;
      }
    });
    expect(compared).toBeGreaterThan(50);
  });

  it('needs every part of the checkpoint: a checkpoint without its tentative Reqs differs', () => {
    const at = checkpoints.find((i) => {
      const c = (log[i] as Extract<HostRecord, { layer: 'checkpoint' }>).record.core;
      return c.reqs.length > c.committedLive;
    })!;
    const c = (log[at] as Extract<HostRecord, { layer: 'checkpoint' }>).record.core;
    const broken: ReplicaCheckpoint = { ...c, reqs: c.reqs.slice(0, c.committedLive) };
    const tail = coreRecords(log.slice(at + 1, at + 2));
    const all = recover(coreRecords(log.slice(0, at + 2)));
    // The loss shows either as a different replica or as a recovery that refuses to go on (a
    // commit record after the checkpoint names a Req the checkpoint no longer holds).
    let recovered: unknown;
    try {
      const bad = recover(tail, broken);
      recovered = describeReplica(bad.replica, bad.outputs);
    } catch (e) {
      recovered = `recovery failed: ${(e as Error).message}`;
    }
    expect(recovered).not.toEqual(describeReplica(all.replica, all.outputs));
  });
});

describe('checkpoints in a running cluster', () => {
  it('a replica restarted from its checkpoint and the records after it rejoins and converges', () => {
    const c = new HostCluster(3, 11, { checkpointEvery: 40 });
    c.workload(400, { keys: 20, strongEvery: 10 });
    c.run(200);
    const disk = c.nodes[1]!.disk;
    expect(disk[0]!.layer).toBe('checkpoint');
    c.crash(1);
    c.workload(200, { keys: 20, strongEvery: 10, at: [0, 2] });
    c.restart(1);
    c.workload(200, { keys: 20, strongEvery: 10 });
    c.settle();
    expect(c.host(1).inspect().replica.stats().committed).toBe(
      c.host(0).inspect().replica.stats().committed,
    );
    expect(c.host(1).inspect().replica.stateDigest()).toBe(
      c.host(0).inspect().replica.stateDigest(),
    );
  });

  it('keeps disk and memory proportional to the checkpoint interval, not to the op count', () => {
    const c = new HostCluster(3, 3, { checkpointEvery: 100 });
    const sizes: number[][] = [];
    for (let round = 0; round < 8; round++) {
      c.workload(500, { keys: 50, strongEvery: 100 });
      c.run(300);
      sizes.push(c.nodes.map((x) => x.disk.length));
    }
    c.settle();
    c.run(200);
    for (let i = 0; i < 3; i++) {
      const node = c.nodes[i]!;
      const h = c.host(i);
      // Each replica wrote a record per Req, commit and accept: far more than it keeps.
      expect(node.log.length).toBeGreaterThan(4000);
      expect(node.disk[0]!.layer).toBe('checkpoint');
      expect(node.disk.length).toBeLessThan(600);
      // Gossip dropped the Reqs every replica has; Paxos truncated what every replica delivered.
      expect(h.inspect().gossip.stats().heldReqs).toBe(0);
      expect(h.inspect().paxos.status().acceptedHeld).toBeLessThan(20);
      expect(h.counters.pruned).toBeGreaterThan(3000);
    }
    // The last rounds keep no more on disk than the first ones did.
    const max = (rows: number[][]) => Math.max(...rows.flat());
    expect(max(sizes.slice(4))).toBeLessThan(2 * max(sizes.slice(0, 2)) + 100);
  });
});

describe('gossip prune keeps what a lagging replica still needs', () => {
  it('holds Reqs a cut-off replica lacks, across restarts from checkpoints, until it has them', () => {
    const c = new HostCluster(3, 5, { checkpointEvery: 30 });
    c.workload(60, { keys: 10, strongEvery: 6 });
    c.settle();
    c.isolated.add(2);
    c.workload(300, { keys: 10, strongEvery: 6, at: [0, 1] });
    c.run(500);
    for (const i of [0, 1]) {
      const h = c.host(i);
      expect(h.inspect().replica.stats().tentative).toBe(0);
      expect(h.counters.checkpoints).toBeGreaterThan(1);
      // Final at 0 and 1, but replica 2 has not got them: still held.
      expect(h.inspect().gossip.stats().heldReqs).toBeGreaterThanOrEqual(300);
    }
    // Both holders restart from their checkpoints while replica 2 is still away.
    c.crash(0);
    c.crash(1);
    c.restart(0);
    c.restart(1);
    expect(c.nodes[0]!.disk[0]!.layer).toBe('checkpoint');
    for (const i of [0, 1])
      expect(c.host(i).inspect().gossip.stats().heldReqs).toBeGreaterThanOrEqual(300);
    c.run(300);
    c.isolated.delete(2);
    c.settle();
    expect(c.host(2).inspect().replica.stateDigest()).toBe(
      c.host(0).inspect().replica.stateDigest(),
    );
    c.run(200);
    // Now that replica 2 has them, nobody keeps them.
    for (let i = 0; i < 3; i++) expect(c.host(i).inspect().gossip.stats().heldReqs).toBe(0);
  });
});
