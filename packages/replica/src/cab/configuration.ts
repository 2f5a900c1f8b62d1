/**
 * Cluster membership as Multi-Paxos decides it: a configuration per consensus instance.
 *
 * A membership change (add or remove one replica) is a value of the ordered log, decided like any
 * batch of op ids. Decided at instance i, it is in force from instance i + CONFIG_DELAY (α) on:
 * the members of instance j are those of the genesis configuration changed by every change decided
 * at an instance ≤ j − α, in instance order. Every replica that learned the decided prefix below
 * j − α + 1 therefore knows the members of instance j, and two replicas never disagree about them
 * (they agree on the decided prefix). This is the α-window reconfiguration of Lamport's "Paxos
 * made simple" §3 / "Reconfiguring a state machine" (Lamport, Malkhi, Zhou, 2010), which Creek §5
 * leaves open: each instance is a Paxos instance of its own over its own acceptors, so an
 * instance's safety needs quorums of its own configuration only, with no intersection between an
 * old and a new configuration (why joint consensus is not needed). The price is that a leader may
 * open an instance only once it knows its configuration: never more than α instances past its
 * decided prefix (MultiPaxos.tryPropose).
 *
 * Changes are applied one at a time (the leader proposes the next one once the last is in force),
 * so an operator always knows which configuration a change starts from; but the safety argument
 * above does not depend on it, and the apply rule is a deterministic function of the decided
 * sequence whatever the leaders proposed: a change that makes no sense where it is decided (adding
 * a member twice, removing a non-member, removing the last one, re-adding a removed id) changes
 * nothing, and says why.
 */

/** The most replica ids a cluster can have: ids are 0..MAX_MEMBER_ID (ballots and op ids encode them). */
export const MAX_MEMBER_ID = 255;

/** α: instances between the one that decides a change and the first it applies to. */
export const CONFIG_DELAY = 16;

export interface Member {
  readonly id: number;
  /** Where its peers reach it (`ws://host:port`); the pure layers only carry it. */
  readonly address: string;
}

export type MembershipChange =
  { readonly op: 'add'; readonly member: Member } | { readonly op: 'remove'; readonly id: number };

/** A change as it travels to the leader and through the log, with the requester's name for it. */
export interface ReconfigRequest {
  readonly change: MembershipChange;
  /** Unique per request (the requester's choice): how it learns its request was decided. */
  readonly nonce: string;
}

/** One configuration and the first instance it governs. */
export interface ConfigEntry {
  /** The first instance this configuration governs (until the next entry's `from`). */
  readonly from: number;
  /** Ascending by id. */
  readonly members: readonly Member[];
  /** Ids that were members once and were removed: never members again (op ids and votes). */
  readonly retired: readonly number[];
  /** The decided request that made it (absent for the genesis configuration). */
  readonly nonce?: string;
}

/** What became of a decided request. */
export type ReconfigOutcome =
  | { readonly applied: true; readonly entry: ConfigEntry; readonly decidedAt: number }
  | { readonly applied: false; readonly reason: string; readonly decidedAt: number };

/** The smallest number of members of `members` that is a majority. */
export function majorityOf(members: readonly Member[]): number {
  return Math.floor(members.length / 2) + 1;
}

/** A genesis configuration: every instance from 0 on. */
export function genesis(members: readonly Member[]): ConfigEntry {
  const sorted = [...members].sort((a, b) => a.id - b.id);
  for (let i = 1; i < sorted.length; i++)
    if (sorted[i]!.id === sorted[i - 1]!.id)
      throw new Error(`configuration: replica id ${sorted[i]!.id} is listed twice`);
  if (sorted.length === 0) throw new Error('configuration: a cluster needs at least one member');
  for (const m of sorted)
    if (!Number.isInteger(m.id) || m.id < 0 || m.id > MAX_MEMBER_ID)
      throw new Error(`configuration: replica ids are 0-${MAX_MEMBER_ID}, not ${m.id}`);
  return { from: 0, members: sorted, retired: [] };
}

/**
 * Why `change` cannot apply to `entry`'s members, or null when it can. The same rule decides at
 * the admin API (a quick refusal) and where a decided change applies (the binding one).
 */
export function changeProblem(entry: ConfigEntry, change: MembershipChange): string | null {
  if (change.op === 'add') {
    const { id } = change.member;
    if (!Number.isInteger(id) || id < 0 || id > MAX_MEMBER_ID)
      return `replica ids are 0-${MAX_MEMBER_ID}, not ${id}`;
    if (entry.members.some((m) => m.id === id)) return `replica ${id} is a member already`;
    if (entry.retired.includes(id))
      return `replica ${id} was removed before, and an id is never reused (its ops and votes may still be around): add the replica under a new id`;
    if (change.member.address.length === 0) return `replica ${id} needs an address`;
    return null;
  }
  if (!entry.members.some((m) => m.id === change.id))
    return `replica ${change.id} is not a member (members: ${entry.members.map((m) => m.id).join(', ')})`;
  if (entry.members.length === 1) return `replica ${change.id} is the last member`;
  return null;
}

/** The configuration `change` makes of `entry`, governing instances from `from` on. */
function applied(entry: ConfigEntry, change: MembershipChange, from: number, nonce: string) {
  const members =
    change.op === 'add'
      ? [...entry.members, change.member].sort((a, b) => a.id - b.id)
      : entry.members.filter((m) => m.id !== change.id);
  const retired =
    change.op === 'remove' ? [...entry.retired, change.id].sort((a, b) => a - b) : entry.retired;
  return { from, members, retired, nonce };
}

/**
 * The configurations of the instances from some point on, as a replica knows them: the one in
 * force at its first entry's `from` and every later one it learned of. Pure data and rules; the
 * MultiPaxos that owns it decides when changes apply and when old entries go.
 */
export class ConfigHistory {
  private entries: ConfigEntry[];
  /** Counts changes to the entries (`apply`, `compact`): caches of derived data key on it. */
  version = 0;

  constructor(entries: readonly ConfigEntry[]) {
    if (entries.length === 0) throw new Error('configuration history: no configuration');
    this.entries = [...entries].sort((a, b) => a.from - b.from);
  }

  /** The configuration that governs `instance` (the first entry's for instances before it). */
  at(instance: number): ConfigEntry {
    let found = this.entries[0]!;
    for (const e of this.entries) {
      if (e.from > instance) break;
      found = e;
    }
    return found;
  }

  /** The configuration every instance from the last change's `from` on has. */
  latest(): ConfigEntry {
    return this.entries[this.entries.length - 1]!;
  }

  /** Every entry, oldest first (what a checkpoint keeps). */
  all(): readonly ConfigEntry[] {
    return this.entries;
  }

  /** The first configuration this replica knows of that removed `id`, if any. */
  removalOf(id: number): ConfigEntry | undefined {
    return this.entries.find((e) => e.retired.includes(id));
  }

  /** The configuration the decided request `nonce` made, while it is kept. */
  madeBy(nonce: string): ConfigEntry | undefined {
    return this.entries.find((e) => e.nonce === nonce);
  }

  /** Whether `id` is a member of `instance`'s configuration. */
  isMember(instance: number, id: number): boolean {
    return this.at(instance).members.some((m) => m.id === id);
  }

  /**
   * Ids that are members of some configuration from `instance` on: whom a replica talks to
   * (heartbeats, prepares, gossip), a member added or about to be added included.
   */
  membersFrom(instance: number): number[] {
    const ids = new Set<number>();
    for (const e of this.entries)
      if (e === this.at(instance) || e.from > instance) for (const m of e.members) ids.add(m.id);
    return [...ids].sort((a, b) => a - b);
  }

  /** The address of member `id` in the newest configuration that has it. */
  address(id: number): string | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const m = this.entries[i]!.members.find((x) => x.id === id);
      if (m !== undefined) return m.address;
    }
    return undefined;
  }

  /**
   * Applies `request`, decided at `instance`: a new entry from `instance` + CONFIG_DELAY on, or the
   * reason it changes nothing. Decisions must be applied in instance order.
   */
  apply(instance: number, request: ReconfigRequest): ReconfigOutcome {
    const base = this.latest();
    const from = instance + CONFIG_DELAY;
    const problem = changeProblem(base, request.change);
    if (problem !== null) return { applied: false, reason: problem, decidedAt: instance };
    const entry = applied(base, request.change, from, request.nonce);
    this.entries.push(entry);
    this.version++;
    return { applied: true, entry, decidedAt: instance };
  }

  /** Drops entries no instance from `below` on is governed by (those a later one replaced there). */
  compact(below: number): void {
    const keep = this.at(below);
    const entries = this.entries.filter((e) => e === keep || e.from > below);
    if (entries.length === this.entries.length) return;
    this.entries = entries;
    this.version++;
  }
}
