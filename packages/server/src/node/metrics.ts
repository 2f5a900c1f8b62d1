import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ReplicaStatus } from '@creek/protocol';

/**
 * /metrics in the Prometheus format (prom-client). Counters and gauges are read from the replica's
 * status (`/status`, ReplicaStatus) when scraped: one status per scrape, so every metric of a
 * scrape describes the same moment and /metrics says nothing /status does not. Latencies are
 * observed by the client endpoint as views go out. Cumulative counts are typed `counter`, so that
 * `rate()` and `increase()` apply to them; the process's CPU, memory, event-loop lag, handles and
 * GC come from prom-client's default metrics.
 */
export class ReplicaMetricsExporter {
  readonly registry = new Registry();
  readonly latency: Histogram<'level'>;
  /** The status of the scrape in progress (`scrape`), read by every metric's collect. */
  private scraped: ReplicaStatus | null = null;

  constructor(
    private readonly status: () => ReplicaStatus,
    replicaId: number,
  ) {
    // Outside `scrape` (the registry read directly) each metric reads a status of its own.
    const snapshot = (): ReplicaStatus => this.scraped ?? this.status();
    this.registry.setDefaultLabels({ replica: String(replicaId) });
    const r = this.registry;
    this.latency = new Histogram({
      name: 'creek_response_seconds',
      help: 'Time from an invoke arriving to its tentative (first) or stable view leaving',
      labelNames: ['level'],
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5],
      registers: [r],
    });
    collectDefaultMetrics({ register: r });
    /** A count the replica keeps, read when scraped (it only grows while the process runs). */
    const counter = (name: string, help: string, read: () => number) =>
      new Counter({
        name,
        help,
        registers: [r],
        collect() {
          this.reset();
          this.inc(read());
        },
      });
    /** A value read from the replica when scraped. */
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers: [r],
        collect() {
          this.set(read());
        },
      });
    new Counter({
      name: 'creek_ops_invoked_total',
      help: 'Operations invoked at this replica, by kind',
      labelNames: ['kind'],
      registers: [r],
      collect() {
        const i = snapshot().invoked;
        this.reset();
        this.inc({ kind: 'weak' }, i.weak);
        this.inc({ kind: 'strong' }, i.strong);
        this.inc({ kind: 'read_only' }, i.readOnly);
        this.inc({ kind: 'rejected' }, i.rejected);
      },
    });
    counter(
      'creek_executions_total',
      'Executions of ordered ops, re-executions included',
      () => snapshot().metrics.executions,
    );
    counter(
      'creek_rollbacks_total',
      'Executions withdrawn because a reorder changed what they read',
      () => snapshot().metrics.rollbacks,
    );
    gauge(
      'creek_execution_ratio',
      'Executions per finalized op',
      () => snapshot().metrics.executionRatio,
    );
    gauge(
      'creek_speculation_accuracy',
      'Share of first tentative responses equal to the final result',
      () => snapshot().metrics.accuracy,
    );
    // Per op: counters, so that a dashboard takes the accuracy of any window as
    // rate(confirmed) / rate(speculated), and an alert can watch one op's corrections.
    new Counter({
      name: 'creek_tentative_answers_total',
      help: 'Ops answered tentatively first whose final answer is known, by op name',
      labelNames: ['op'],
      registers: [r],
      collect() {
        this.reset();
        for (const [op, c] of Object.entries(snapshot().metrics.byOp))
          this.inc({ op }, c.speculated);
      },
    });
    new Counter({
      name: 'creek_tentative_answers_confirmed_total',
      help: 'Of those, the ones whose first, tentative answer was the final one, by op name',
      labelNames: ['op'],
      registers: [r],
      collect() {
        this.reset();
        for (const [op, c] of Object.entries(snapshot().metrics.byOp))
          this.inc({ op }, c.speculatedCorrectly);
      },
    });
    gauge('creek_committed_ops', 'Length of the committed list', () => snapshot().committed);
    gauge('creek_tentative_ops', 'Length of the tentative list', () => snapshot().tentative);
    gauge(
      'creek_versions',
      'Versions held by the multiversion store',
      () => snapshot().metrics.versions,
    );
    counter(
      'creek_paxos_instances_decided_total',
      'Consensus instances this replica learned',
      () => snapshot().paxos.decided,
    );
    counter(
      'creek_paxos_elections_total',
      'Elections this replica started',
      () => snapshot().paxos.elections,
    );
    counter(
      'creek_peer_bytes_sent_total',
      'Bytes sent to peers (gossip and Paxos)',
      () => snapshot().network.bytesSent,
    );
    counter(
      'creek_peer_bytes_received_total',
      'Bytes received from peers',
      () => snapshot().network.bytesReceived,
    );
    gauge(
      'creek_leader',
      'The replica this one takes for the Paxos leader (-1: none known)',
      () => snapshot().leader ?? -1,
    );
    gauge('creek_is_leader', '1 while this replica leads Paxos', () =>
      snapshot().role === 'leader' ? 1 : 0,
    );
    gauge(
      'creek_quorate',
      '1 while this replica hears a majority (0: cut off; it will not campaign or lead)',
      () => (snapshot().quorate ? 1 : 0),
    );
    gauge('creek_halted', '1 once the replica stopped for good: it lost durable state', () =>
      snapshot().halted === null ? 0 : 1,
    );
    gauge(
      'creek_learning',
      '1 while a replica with no op of its own on disk learns from its peers (takes no client op)',
      () => (snapshot().learning ? 1 : 0),
    );
    gauge(
      'creek_catch_up_behind_ops',
      'Ops a peer is known to hold that this replica lacks (a few in flight; thousands while it catches up)',
      () => snapshot().catchUp.behind,
    );
    gauge(
      'creek_speculation_held',
      '1 while the replica holds speculation to catch up: reads and first tentative answers wait',
      () => (snapshot().catchUp.holding ? 1 : 0),
    );
    gauge(
      'creek_divergence',
      "1 while this replica knows its finalized state differs from a peer's at the same committed position: an op is not deterministic (/status divergence names it)",
      () => (snapshot().divergence.current === null ? 0 : 1),
    );
    gauge(
      'creek_stable_answers_stopped',
      "1 while a divergence leaves this replica without a majority's state: it serves no stable answer and takes no client op",
      () => (snapshot().divergence.current?.servesStable === false ? 1 : 0),
    );
    counter(
      'creek_divergence_comparisons_total',
      "Peers' digests of their finalized state compared with this replica's",
      () => snapshot().divergence.comparisons,
    );
    new Gauge({
      name: 'creek_peer_up',
      help: '1 while the link to this peer is connected, 0 while it is down or connecting',
      labelNames: ['peer'],
      registers: [r],
      collect() {
        this.reset();
        for (const [peer, state] of Object.entries(snapshot().peers))
          this.set({ peer }, state === 'connected' ? 1 : 0);
      },
    });
    gauge(
      'creek_peer_protocol_cluster_version',
      'The cluster version: the newest peer protocol version every member speaks, as far as this replica heard (it rises once the last replica is upgraded)',
      () => snapshot().protocol.cluster,
    );
    gauge(
      'creek_peer_protocol_newest',
      'The newest peer protocol version this replica speaks',
      () => snapshot().protocol.newest,
    );
    new Gauge({
      name: 'creek_peer_link_protocol_version',
      help: 'The peer protocol version the link to this peer runs at (absent while it is not up)',
      labelNames: ['peer'],
      registers: [r],
      collect() {
        this.reset();
        for (const [peer, link] of Object.entries(snapshot().protocol.links))
          if (link.version !== null) this.set({ peer }, link.version);
      },
    });
    counter(
      'creek_peer_links_refused_total',
      'Peer links refused because the two replicas speak no common protocol version, or the peer speaks less than the cluster version (an upgrade skipped a release, or a downgrade)',
      () => snapshot().protocol.refused,
    );
    gauge(
      'creek_members',
      'Replicas in the configuration this replica knows (the latest, while a change is under way)',
      () => snapshot().membership.latest.length,
    );
    gauge(
      'creek_storage_bytes',
      'Bytes of the data directory: the database and its write-ahead log',
      () => snapshot().storage.bytes,
    );
    gauge(
      'creek_client_connections',
      'Clients connected now',
      () => snapshot().clients.connections,
    );
    counter(
      'creek_client_errors_total',
      'Error answers sent to clients: ops refused (Unauthorized, Forbidden, InvalidArguments, unknown op, Unavailable, ...)',
      () => snapshot().clients.rejected,
    );
    counter(
      'creek_peer_frames_rejected_total',
      'Peer frames refused (bad frames, failed authentication)',
      () => snapshot().network.rejected,
    );
  }

  /** The metrics as Prometheus text: one status for the whole scrape. */
  async scrape(): Promise<string> {
    this.scraped = this.status();
    try {
      return await this.registry.metrics();
    } finally {
      this.scraped = null;
    }
  }
}
