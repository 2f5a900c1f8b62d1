import { Gauge, Histogram, Registry } from 'prom-client';
import type { ReplicaHost } from '../host/replica-host.js';
import type { PeerMesh } from './peer-mesh.js';

/**
 * /metrics in the Prometheus format (prom-client). Counters and gauges are read from the replica
 * when scraped; latencies are observed by the client endpoint as views go out.
 */
export class ReplicaMetricsExporter {
  readonly registry = new Registry();
  readonly latency: Histogram<'level'>;

  constructor(host: () => ReplicaHost, mesh: PeerMesh, replicaId: number) {
    this.registry.setDefaultLabels({ replica: String(replicaId) });
    const r = this.registry;
    this.latency = new Histogram({
      name: 'creek_response_seconds',
      help: 'Time from an invoke arriving to its tentative (first) or stable view leaving',
      labelNames: ['level'],
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5],
      registers: [r],
    });
    /** A value read from the replica when scraped (cumulative counts included: the replica keeps them). */
    const counter = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers: [r],
        collect() {
          this.set(read());
        },
      });
    new Gauge({
      name: 'creek_ops_invoked_total',
      help: 'Operations invoked at this replica, by kind',
      labelNames: ['kind'],
      registers: [r],
      collect() {
        const i = host().replica.metrics.invoked;
        this.set({ kind: 'weak' }, i.weak);
        this.set({ kind: 'strong' }, i.strong);
        this.set({ kind: 'read_only' }, i.readOnly);
        this.set({ kind: 'rejected' }, i.rejected);
      },
    });
    counter(
      'creek_executions_total',
      'Executions of ordered ops, re-executions included',
      () => host().replica.metrics.executions,
    );
    counter(
      'creek_rollbacks_total',
      'Executions withdrawn because a reorder changed what they read',
      () => host().replica.metrics.rollbacks,
    );
    counter('creek_execution_ratio', 'Executions per finalized op', () =>
      host().replica.metrics.executionRatio(),
    );
    counter(
      'creek_speculation_accuracy',
      'Share of first tentative responses equal to the final result',
      () => host().replica.metrics.accuracy(),
    );
    counter(
      'creek_committed_ops',
      'Length of the committed list',
      () => host().replica.stats().committed,
    );
    counter(
      'creek_tentative_ops',
      'Length of the tentative list',
      () => host().replica.stats().tentative,
    );
    counter(
      'creek_versions',
      'Versions held by the multiversion store',
      () => host().replica.stats().versions,
    );
    counter(
      'creek_paxos_instances_decided_total',
      'Consensus instances this replica learned',
      () => host().paxos.counters.decided,
    );
    counter(
      'creek_paxos_elections_total',
      'Elections this replica started',
      () => host().paxos.counters.elections,
    );
    counter(
      'creek_peer_bytes_sent_total',
      'Bytes sent to peers (gossip and Paxos)',
      () => mesh.counters.bytesSent,
    );
    counter(
      'creek_peer_bytes_received_total',
      'Bytes received from peers',
      () => mesh.counters.bytesReceived,
    );
    counter(
      'creek_peer_frames_rejected_total',
      'Peer frames refused (bad frames, failed authentication)',
      () => mesh.counters.rejected,
    );
  }
}
