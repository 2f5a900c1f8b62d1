/**
 * Strong-op latency in message delays and messages per strong op, from the simulator's protocol
 * stack (core + gossip + Multi-Paxos + conditional delivery), fault-free, with a stable leader.
 *
 *   npm run bench:cab [-- --replicas N]
 *
 * Every message takes exactly one time unit (1 ms), executions and disk writes take none, so the
 * time from the moment the origin replica receives a strong op to its stable response is the number
 * of one-way message delays on the critical path. Creek's bar (§6.2) is 3 communication phases.
 * Messages per strong op count what the op causes: gossip pushes and Paxos forward/accept/accepted;
 * periodic heartbeats and anti-entropy summaries run regardless of load and are reported apart.
 */
import {
  ConditionalDelivery,
  MultiPaxos,
  type PaxosMessage,
  type PaxosOutput,
} from '@creek/server/cab';
import {
  defineApp,
  Replica,
  InlineExecutor,
  type ExecutionResult,
  type Output,
} from '@creek/server';
import { Gossip, type GossipMessage, type GossipOutput } from '@creek/server/gossip';
import { EventQueue } from '@creek/server/sim';

const app = defineApp({});
const DELAY = 1;

type Msg = { kind: 'gossip'; msg: GossipMessage } | { kind: 'paxos'; msg: PaxosMessage };

interface Host {
  id: number;
  replica: Replica;
  gossip: Gossip;
  paxos: MultiPaxos;
  delivery: ConditionalDelivery;
}

class Cluster {
  now = 0;
  readonly events = new EventQueue<() => void>();
  readonly hosts: Host[];
  readonly stable = new Map<number, number>();
  readonly counts = new Map<string, number>();
  private readonly executor = new InlineExecutor(app);

  constructor(n: number) {
    const ids = Array.from({ length: n }, (_, i) => i);
    this.hosts = ids.map((id) => {
      const h: Host = {
        id,
        replica: new Replica({ id, app, noopIntervalMs: 1e12 }),
        gossip: new Gossip({ self: id, peers: ids }),
        paxos: undefined as unknown as MultiPaxos,
        delivery: new ConditionalDelivery(),
      };
      h.paxos = new MultiPaxos({
        self: id,
        replicas: ids,
        maxInFlight: 4,
        isOrdered: (x) => h.delivery.hasOrdered(x),
      });
      return h;
    });
    for (const h of this.hosts) {
      const tick = (): void => {
        this.core(h, h.replica.tick(this.now));
        this.gossip(h, h.gossip.tick(this.now));
        h.paxos.setDeliveredBelow(h.delivery.deliveredBelow());
        this.paxos(h, h.paxos.tick(this.now));
        this.events.push(this.now + 1, tick);
      };
      this.events.push(0, tick);
    }
  }

  private send(from: Host, to: number, msg: Msg): void {
    const kind = msg.kind === 'gossip' ? `gossip.${msg.msg.kind}` : `paxos.${msg.msg.type}`;
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
    const target = this.hosts[to]!;
    const deliver = (): void => {
      if (msg.kind === 'gossip') this.gossip(target, target.gossip.receive(from.id, msg.msg));
      else this.paxos(target, target.paxos.receive(from.id, msg.msg));
    };
    // A replica's messages to itself are local calls, not network hops.
    this.events.push(this.now + (to === from.id ? 0 : DELAY), deliver);
  }

  core(h: Host, out: Output[]): void {
    for (let i = 0; ; i++) {
      if (i === out.length) {
        const id = h.delivery.next((x) => h.replica.checkDep(x));
        if (id === null) break;
        h.delivery.markDelivered(id);
        h.paxos.delivered(id);
        out.push(...h.replica.deliverStrong(id));
        if (i === out.length) continue;
      }
      const o = out[i]!;
      if (o.type === 'execute')
        out.push(...h.replica.executed(this.executor.execute(o.job) as ExecutionResult));
      else if (o.type === 'rbCast') this.gossip(h, h.gossip.cast(o.req));
      else if (o.type === 'cabCast')
        this.paxos(h, h.paxos.cast({ id: o.id, prevStrong: o.prevStrong }));
      else if (o.type === 'respond' && o.level === 'stable') this.stable.set(o.tag, this.now);
    }
  }

  gossip(h: Host, out: GossipOutput[]): void {
    for (const o of out) {
      if (o.type === 'send') this.send(h, o.to, { kind: 'gossip', msg: o.msg });
      else this.core(h, h.replica.deliverReq(o.req));
    }
  }

  paxos(h: Host, out: PaxosOutput[]): void {
    let changed = false;
    for (const o of out) {
      if (o.type === 'send') this.send(h, o.to, { kind: 'paxos', msg: o.msg });
      else if (o.type === 'decide') {
        h.delivery.decide(o.instance, o.value);
        changed = true;
      } else if (o.type === 'skip') {
        h.delivery.skipTo(o.below);
        changed = true;
      }
    }
    if (changed) this.core(h, []);
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
    const h = this.hosts[at]!;
    this.core(
      h,
      h.replica.invoke(this.now, {
        op: 'kv.increment',
        args: { key: `k${tag % 10}` },
        strong: true,
        tag,
      }),
    );
  }

  leader(): number | null {
    return this.hosts.find((h) => h.paxos.status().role === 'leader')?.id ?? null;
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
console.log(`cab benchmark: ${n} replicas, leader ${leader}, one-way delay ${DELAY} ms, no faults`);

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
console.log(
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

console.log(`messages per strong op (caused by the op; periodic heartbeats and summaries apart):`);
console.log(
  `  1 at a time:   ${one.caused.toFixed(2)}  [${one.detail}]  + background ${one.background.toFixed(2)} over ${oneMs} ms`,
);
console.log(
  `  1,000 at once: ${many.caused.toFixed(2)}  [${many.detail}]  + background ${many.background.toFixed(2)} over ${manyMs} ms`,
);
console.log(
  `  Paxos instances: ${cluster.hosts[leader]!.paxos.counters.instancesProposed} proposed for ${cluster.hosts[leader]!.paxos.counters.idsProposed} ids`,
);
