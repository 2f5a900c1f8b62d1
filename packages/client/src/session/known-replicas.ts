import type { ReplicaUrls } from '@creek/protocol';

/**
 * A replica nearer than the current one by less than this (and than NEARER_SHARE of the current
 * one's round trip) is not worth a move: each move resubmits the ops in flight, and round trips
 * measured on a busy machine wander by a few milliseconds. Regions differ by tens.
 */
export const NEARER_BY_MS = 10;
export const NEARER_SHARE = 0.25;

/** A replica the client knows, as `client.replicas()` lists it (nearest first). */
export interface KnownReplica {
  /** Its client URL: one the client was given, or one the cluster listed. */
  readonly url: string;
  /** Its replica id, once the cluster listed it or it welcomed the client; else null. */
  readonly id: number | null;
  /** The round trip last measured to it, in ms; null: not measured yet, or unreachable. */
  readonly rttMs: number | null;
  /**
   * Whether it is a member now, as the cluster last listed them: false for a URL the client was
   * given that names a replica no longer a member (replaced, removed); null when not known.
   */
  readonly member: boolean | null;
}

/**
 * The replicas a client knows and how far each is. URLs come from the caller (`given`, in its
 * order) and from the replicas themselves (`members`, their welcome's list and `members` frames:
 * the cluster's membership now). Round trips come from probes (`measured`); a URL whose
 * connection failed counts as unreachable until it is measured again.
 *
 * The ranking, which failover follows: reachable replicas by round trip, nearest first; then
 * those not measured yet, in the caller's order, then the members' order; then unreachable ones;
 * last, URLs the caller gave that name a replica no longer a member (a replaced one), kept so a
 * client is never left with no URL at all. Pure data: no sockets, no clock.
 */
export class KnownReplicas {
  /** The members' client URLs, in the order the replica listed them; empty until learnt. */
  private members: string[] = [];
  /** Replica ids by URL: from the members' list, and from welcomes (a given URL's replica). */
  private readonly ids = new Map<string, number>();
  /** Round trips in ms by URL; Infinity: unreachable (its probe or its connection failed). */
  private readonly rtts = new Map<string, number>();

  constructor(private readonly given: readonly string[]) {}

  /** The members changed (or were first learnt): whether the list differs from the last one. */
  learn(members: ReplicaUrls): boolean {
    const urls = [...new Set(members.map((m) => m.url))];
    const same = urls.length === this.members.length && urls.every((u, i) => u === this.members[i]);
    for (const m of members) this.ids.set(m.url, m.id);
    this.members = urls;
    for (const url of [...this.rtts.keys()]) if (!this.knows(url)) this.rtts.delete(url);
    return !same;
  }

  /** The replica at `url` welcomed the client as replica `id`. */
  welcomedAs(url: string, id: number): void {
    this.ids.set(url, id);
  }

  /** A probe of `url` measured `rttMs`, or failed (null). */
  measured(url: string, rttMs: number | null): void {
    if (this.knows(url)) this.rtts.set(url, rttMs ?? Number.POSITIVE_INFINITY);
  }

  /**
   * The connection to `url` failed: it, and every other URL of the same replica, is unreachable
   * until measured again (so the client does not move back to it on an older measurement).
   */
  unreachable(url: string): void {
    const id = this.ids.get(url);
    for (const u of this.all())
      if (u === url || (id !== undefined && this.ids.get(u) === id))
        this.rtts.set(u, Number.POSITIVE_INFINITY);
  }

  /** Every replica known, nearest first (the ranking's order). */
  list(): KnownReplica[] {
    return this.ranked().map((url) => {
      const rtt = this.rtts.get(url);
      const id = this.ids.get(url) ?? null;
      return {
        url,
        id,
        rttMs: rtt === undefined || rtt === Number.POSITIVE_INFINITY ? null : rtt,
        member:
          this.members.length === 0
            ? null
            : this.members.includes(url) || (id !== null && !this.outsider(url)),
      };
    });
  }

  /** Every URL known, in the ranking's order (see the class). */
  ranked(): string[] {
    const all = this.all();
    const rank = (url: string, i: number): [number, number, number] => {
      if (this.outsider(url)) return [3, 0, i];
      const rtt = this.rtts.get(url);
      if (rtt === undefined) return [1, 0, i];
      return rtt === Number.POSITIVE_INFINITY ? [2, 0, i] : [0, rtt, i];
    };
    return all
      .map((url, i) => ({ url, key: rank(url, i) }))
      .sort((a, b) => a.key[0] - b.key[0] || a.key[1] - b.key[1] || a.key[2] - b.key[2])
      .map((r) => r.url);
  }

  /**
   * Where the client, connected at `url` to replica `replica`, should move now, or null to stay:
   * its replica is no longer a member (replaced, removed), or a reachable member is nearer by a
   * margin (NEARER_BY_MS, NEARER_SHARE). The current replica's distance is that of any of its URLs.
   */
  nearer(url: string, replica: number): string | null {
    const best = this.ranked()[0];
    if (best === undefined || best === url || this.ids.get(best) === replica) return null;
    const bestRtt = this.rtts.get(best);
    if (this.members.length > 0 && !this.members.some((u) => this.ids.get(u) === replica))
      return this.outsider(best) ? null : best;
    if (bestRtt === undefined || bestRtt === Number.POSITIVE_INFINITY) return null;
    let current: number | undefined;
    for (const u of this.all())
      if (u === url || this.ids.get(u) === replica) {
        const rtt = this.rtts.get(u);
        if (rtt !== undefined && rtt !== Number.POSITIVE_INFINITY)
          current = current === undefined ? rtt : Math.min(current, rtt);
      }
    if (current === undefined) return null;
    return bestRtt + Math.max(NEARER_BY_MS, NEARER_SHARE * current) < current ? best : null;
  }

  /** Given URLs first (the caller's order), then the members not among them. */
  private all(): string[] {
    return [...this.given, ...this.members.filter((u) => !this.given.includes(u))];
  }

  private knows(url: string): boolean {
    return this.given.includes(url) || this.members.includes(url);
  }

  /** A URL the caller gave whose replica is known and is no longer a member. */
  private outsider(url: string): boolean {
    if (this.members.length === 0 || this.members.includes(url)) return false;
    const id = this.ids.get(url);
    return id !== undefined && !this.members.some((u) => this.ids.get(u) === id);
  }
}
