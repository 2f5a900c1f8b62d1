import {
  clusterVersion,
  describePeerVersions,
  linkVersion,
  PEER_MESSAGE_SINCE,
  peerMessageKey,
  versionAllows,
  type PeerVersions,
  type ReplicaStatus,
} from '@creek/protocol';
import type { Logger } from 'pino';
import type { PeerMessage } from '@creek/replica/host/peer-message.js';

/**
 * What one replica knows of its peers' protocol versions (peer-versions.ts in @creek/protocol):
 * the range each peer told it in its last authenticated handshake, the version each outbound link
 * runs at, and the cluster version. The mesh (peer-mesh.ts) asks it whether a link may run, and
 * whether a message may go on a link.
 *
 * The cluster version is known from the handshakes, not decided through the log: a replica can
 * only send on a link what the link's version allows, whatever the others think, so the links are
 * where a version is in force; a member not heard from since this process started counts as
 * speaking only the oldest version, so the cluster version rises only once every member has said
 * it speaks more. It never falls while the process runs: a member that comes back speaking less
 * (an older release on it) is refused, as etcd refuses a member older than its cluster, so that
 * what the cluster version let the members start using stays readable by all of them. A process
 * that starts learns it anew from its peers, from the oldest version up; the storage format keeps
 * an older release off a directory a newer one may have written (storage-migrations.ts).
 */
export class PeerLinkVersions {
  /** The range each peer told in its last authenticated handshake, either direction. */
  private readonly heard = new Map<number, PeerVersions>();
  /** The version of each outbound link that is up. */
  private readonly links = new Map<number, number>();
  /** The highest cluster version seen so far: it never falls (see the class comment). */
  private floor: number;
  /** Links refused because the two ends speak no common version, or the peer speaks too little. */
  refused = 0;
  /**
   * The refusals logged per peer (its own, and the peer's that it was told): each logged once
   * until a link with that peer comes up, not at every dial.
   */
  private readonly complaints = new Map<number, Set<string>>();

  constructor(
    private readonly self: number,
    /** The versions this replica speaks. */
    readonly ours: PeerVersions,
    /** The current members' ids (this replica's included). */
    private readonly members: () => Iterable<number>,
    private readonly log: Logger,
    /** The version that introduced each message kind (PEER_MESSAGE_SINCE; tests give their own). */
    private readonly since: ReadonlyMap<string, number> = PEER_MESSAGE_SINCE,
  ) {
    this.floor = ours.oldest;
  }

  /**
   * Why a link with `peer`, which speaks `theirs`, may not run (a sentence for the log, naming both
   * ranges and what to do), or null with the version it runs at.
   */
  check(
    peer: number,
    theirs: PeerVersions,
  ): { refused: string; version: null } | { refused: null; version: number } {
    const version = linkVersion(this.ours, theirs);
    if (version === null)
      return {
        version,
        refused: `replica ${peer} speaks peer protocol versions ${describePeerVersions(theirs)} and this replica (${this.self}) ${describePeerVersions(this.ours)}: no version in common, so their link is refused. Upgrade one release at a time: every replica must run a release that speaks the version the others run before any of them moves past it (docs/operations.md, Upgrading)`,
      };
    const cluster = this.cluster();
    if (theirs.newest < cluster)
      return {
        version: null,
        refused: `replica ${peer} speaks peer protocol versions up to ${theirs.newest}, and every member of this cluster already speaks ${cluster}: their link is refused, as a member cannot go back to an older release once the whole cluster runs a newer one. Run the newer release on replica ${peer} (docs/operations.md, Upgrading)`,
      };
    return { refused: null, version };
  }

  /** Counts a refused link, and logs why once per peer until a link with it comes up. */
  refuse(peer: number, why: string): void {
    this.refused++;
    const logged = this.complaints.get(peer) ?? new Set<string>();
    if (logged.has(why)) return;
    logged.add(why);
    this.complaints.set(peer, logged);
    this.log.error({ peer, ours: this.ours }, why);
  }

  /** `peer` proved the cluster secret and told its range, on a link that runs. */
  heardFrom(peer: number, theirs: PeerVersions): void {
    this.heard.set(peer, theirs);
    this.complaints.delete(peer);
  }

  /** The outbound link to `peer` came up at `version`. */
  linkUp(peer: number, version: number): void {
    this.links.set(peer, version);
  }

  linkDown(peer: number): void {
    this.links.delete(peer);
  }

  /** The version the outbound link to `peer` runs at, or null while it is not up. */
  version(peer: number): number | null {
    return this.links.get(peer) ?? null;
  }

  /**
   * The messages of `msgs` that a link at `version` may carry: the gate of every new message kind
   * (PEER_MESSAGE_SINCE), which the mesh passes everything it sends through. One a link's version
   * does not allow is held back, as if lost: what it carries must then be recovered, or wait until
   * the link's version allows it, as every message the mesh drops.
   */
  sendable(version: number, msgs: readonly PeerMessage[]): readonly PeerMessage[] {
    if (this.since.size === 0) return msgs;
    const allowed = msgs.filter((m) => {
      const since = this.since.get(peerMessageKey(m.kind, m.msg));
      return since === undefined || versionAllows(version, since);
    });
    return allowed.length === msgs.length ? msgs : allowed;
  }

  /** The cluster version: the newest version every member speaks, as far as this replica heard. */
  cluster(): number {
    const now = clusterVersion(this.self, this.ours, this.members(), this.heard);
    if (now > this.floor) {
      this.floor = now;
      this.log.info({ version: now }, 'every member speaks this peer protocol version now');
    }
    return this.floor;
  }

  /** Whether the cluster may use what `since` introduced (a new kind of log entry). */
  clusterAllows(since: number): boolean {
    return versionAllows(this.cluster(), since);
  }

  /** What /status shows (ReplicaStatus `protocol`) for these peers. */
  status(peers: Iterable<number>): ReplicaStatus['protocol'] {
    const links: ReplicaStatus['protocol']['links'] = {};
    for (const id of peers) {
      const speaks = this.heard.get(id);
      links[String(id)] = {
        version: this.version(id),
        speaks: speaks === undefined ? null : { oldest: speaks.oldest, newest: speaks.newest },
      };
    }
    return {
      oldest: this.ours.oldest,
      newest: this.ours.newest,
      cluster: this.cluster(),
      links,
      refused: this.refused,
    };
  }
}
