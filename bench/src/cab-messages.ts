/**
 * Strong-op latency in message delays and messages per strong op, from the simulator's protocol
 * stack (core + gossip + Multi-Paxos + conditional delivery), fault-free, with a stable leader.
 *
 *   npm run bench:cab [-- --replicas N]
 *
 * Every message takes exactly one time unit (1 ms), executions and disk writes take none, so the
 * time from the moment the origin replica receives a strong op to its stable response is the number
 * of one-way message delays on the critical path. Creek's bar (§6.2) is 3 communication phases.
 * Messages per strong op count network messages (not a replica's messages to itself) that the op
 * causes: gossip pushes and Paxos forward/accept/accepted;
 * periodic heartbeats and anti-entropy summaries run regardless of load and are reported apart.
 */
import { defineApp, InlineExecutor } from '@creek/server';
import {
  ReplicaHost,
  stepWithInstantDisk,
  type HostInput,
  type PeerMessage,
} from '@creek/server/host';
import { EventQueue } from '@creek/server/sim';
import { recordResults } from './results.js';

/** The report: stdout, and the dated record in bench/results/. */
const out = recordResults('cab', 'text');

const app = defineApp({});
const DELAY = 1;

class Cluster {
  now = 0;
  readonly events = new EventQueue<() => void>();
  readonly hosts: ReplicaHost[];
  readonly stable = new Map<number, number>();
  readonly counts = new Map<string, number>();

  constructor(n: number) {
    const ids = Array.from({ length: n }, (_, i) => i);
    const executor = new InlineExecutor(app);
    this.hosts = ids.map(
      (id) =>
        new ReplicaHost({
          id,
          replicas: ids,
          replica: { app, noopIntervalMs: 1e12 },
          paxos: { maxInFlight: 4 },
          executor,
          origin: id, // new replicas without a disk: no identity to learn
        }),
    );
    for (const id of ids) {
      this.step(id, { kind: 'start' });
      const tick = (): void => {
        this.step(id, { kind: 'tick', now: this.now });
        this.events.push(this.now + 1, tick);
      };
      this.events.push(0, tick);
    }
  }

  /** One step of replica `id`; its disk writes take no time here. */
  private step(id: number, input: HostInput): void {
    const ready = stepWithInstantDisk(this.hosts[id]!, input);
    for (const o of ready.outputs)
      if (o.kind === 'send') this.send(id, o.to, o.msg);
      else if (o.response.level === 'stable') this.stable.set(o.response.tag, this.now);
    // Only a replica that lost durable state halts; these never restart.
    if (ready.halted !== null) throw new Error(ready.halted);
  }

  private send(from: number, to: number, msg: PeerMessage): void {
    const kind = msg.kind === 'gossip' ? `gossip.${msg.msg.kind}` : `paxos.${msg.msg.type}`;
    if (to !== from) this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
    // A replica's messages to itself are local calls, not network hops.
    this.events.push(this.now + (to === from ? 0 : DELAY), () =>
      this.step(to, { kind: 'receive', from, message: msg }),
    );
  }

  runUntil(done: () => boolean, limit = 100_000): void {
    while (!done()) {
      const ev = this.events.pop();
      if (ev === undefined || ev.at > limit) throw new Error('benchmark cluster stalled');
      this.now = ev.at;
      ev.event();
    }
  }

  invoke(at: number, tag: number): void {
    this.step(at, {
      kind: 'invoke',
      now: this.now,
      request: { op: 'kv.increment', args: { key: `k${tag % 10}` }, strong: true, tag },
    });
  }

  leader(): number | null {
    return this.hosts.find((h) => h.status().role === 'leader')?.id ?? null;
  }

  snapshotCounts(): Map<string, number> {
    return new Map(this.counts);
  }
}

function diff(after: Map<string, number>, before: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of after) out.set(k, v - (before.get(k) ?? 0));
  return out;
}

const BACKGROUND = new Set(['paxos.heartbeat', 'gossip.summary']);
function perOp(
  d: Map<string, number>,
  ops: number,
): { caused: number; background: number; detail: string } {
  let caused = 0;
  let background = 0;
  const parts: string[] = [];
  for (const [k, v] of [...d].sort()) {
    if (v === 0) continue;
    if (BACKGROUND.has(k)) background += v;
    else {
      caused += v;
      parts.push(`${k} ${(v / ops).toFixed(2)}`);
    }
  }
  return { caused: caused / ops, background: background / ops, detail: parts.join(', ') };
}

const argv = process.argv.slice(2);
const n = argv[0] === '--replicas' && Number.isInteger(Number(argv[1])) ? Number(argv[1]) : 5;
const cluster = new Cluster(n);
cluster.runUntil(() => cluster.leader() !== null && cluster.now > 200);
const leader = cluster.leader()!;
const follower = (leader + 1) % n;
out.print(`cab benchmark: ${n} replicas, leader ${leader}, one-way delay ${DELAY} ms, no faults`);

let tag = 1;
const latency = (origin: number): number[] => {
  const out: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t = tag++;
    const start = cluster.now;
    cluster.invoke(origin, t);
    cluster.runUntil(() => cluster.stable.has(t));
    out.push((cluster.stable.get(t)! - start) / DELAY);
    cluster.runUntil(() => cluster.now >= start + 20); // let the pipeline drain
  }
  return out;
};
const fromFollower = latency(follower);
const fromLeader = latency(leader);
const show = (xs: number[]): string => {
  const s = [...xs].sort((a, b) => a - b);
  return `median ${s[Math.floor(s.length / 2)]}, max ${s[s.length - 1]}`;
};
out.print(
  `message delays, receipt at the origin to stable response: origin = follower: ${show(fromFollower)}; origin = leader: ${show(fromLeader)}`,
);

// One strong op at a time.
let before = cluster.snapshotCounts();
let t0 = cluster.now;
const sequential = 200;
for (let i = 0; i < sequential; i++) {
  const t = tag++;
  cluster.invoke(i % n, t);
  cluster.runUntil(() => cluster.stable.has(t));
}
const one = perOp(diff(cluster.snapshotCounts(), before), sequential);
const oneMs = cluster.now - t0;

// 1,000 concurrent strong ops, spread over the replicas.
before = cluster.snapshotCounts();
t0 = cluster.now;
const concurrent = 1000;
const tags: number[] = [];
for (let i = 0; i < concurrent; i++) {
  tags.push(tag);
  cluster.invoke(i % n, tag++);
}
cluster.runUntil(() => tags.every((t) => cluster.stable.has(t)));
const many = perOp(diff(cluster.snapshotCounts(), before), concurrent);
const manyMs = cluster.now - t0;

out.print(`messages per strong op (caused by the op; periodic heartbeats and summaries apart):`);
out.print(
  `  1 at a time:   ${one.caused.toFixed(2)}  [${one.detail}]  + background ${one.background.toFixed(2)} over ${oneMs} ms`,
);
out.print(
  `  1,000 at once: ${many.caused.toFixed(2)}  [${many.detail}]  + background ${many.background.toFixed(2)} over ${manyMs} ms`,
);
out.print(
  `  Paxos instances: ${cluster.hosts[leader]!.status().paxos.instancesProposed} proposed for ${cluster.hosts[leader]!.inspect().paxos.counters.idsProposed} ids`,
);
out.save();
