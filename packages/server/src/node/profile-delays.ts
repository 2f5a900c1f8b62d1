import { oneWayMs, type NetworkProfile } from '../geo/index.js';

/**
 * Below this, a profile's one-way delay is not added: a timer cannot wait less than 1 ms (Node
 * rounds it up to 1), and a message over loopback already takes about a LAN's 0.25 ms. Adding it
 * would make `lan` four times slower than the profile says.
 */
export const MIN_INJECTED_DELAY_MS = 1;

/** The one-way delay replica `from` adds to each message it sends replica `to`. */
export interface LinkDelay {
  readonly from: number;
  readonly to: number;
  readonly ms: number;
}

/**
 * The one-way delay each replica among `ids` adds towards each other one to emulate `profile`'s
 * links on one machine: half the round trip between their regions (replica id i sits in the
 * profile's region i mod regions), 0 where that is under a millisecond. Without jitter: the
 * replicas' admin `delay` holds one fixed delay per link.
 */
export function profileDelays(profile: NetworkProfile, ids: readonly number[]): LinkDelay[] {
  const out: LinkDelay[] = [];
  for (const from of ids)
    for (const to of ids) {
      if (from === to) continue;
      const ms = oneWayMs(profile, from, to);
      out.push({ from, to, ms: ms < MIN_INJECTED_DELAY_MS ? 0 : ms });
    }
  return out;
}

/** What `ProfileLinks` needs of a cluster (LocalCluster). */
export interface DelayedCluster {
  readonly members: readonly number[];
  isRunning(i: number): boolean;
  admin(i: number, action: string, params: Record<string, string | number>): Promise<unknown>;
}

/**
 * Keeps a cluster's links delayed as `profile` says, through each replica's admin `delay`. A
 * replica holds the delays it was given until it exits, so one that (re)starts needs its own
 * again: `reapply` sets them once it answers.
 */
export class ProfileLinks {
  private readonly pending = new Set<Promise<void>>();
  private failure: Error | null = null;

  constructor(
    readonly profile: NetworkProfile,
    private readonly cluster: DelayedCluster,
  ) {}

  /** Sets the delay of every link from or to one of `around` whose sending end runs. */
  async apply(around: readonly number[] = this.cluster.members): Promise<void> {
    const near = new Set(around);
    await Promise.all(
      profileDelays(this.profile, this.cluster.members)
        .filter((d) => (near.has(d.from) || near.has(d.to)) && this.cluster.isRunning(d.from))
        .map((d) => this.cluster.admin(d.from, 'delay', { peer: d.to, ms: d.ms })),
    );
  }

  /**
   * The delays of replica i's links, set once it answers (until then it has none: the time it
   * takes to start); given up once `current()` is false (that process exited, the cluster stops).
   */
  reapply(i: number, current: () => boolean, timeoutMs = 30_000): void {
    const deadline = Date.now() + timeoutMs;
    const attempt = async (): Promise<void> => {
      while (current()) {
        try {
          return await this.apply([i]);
        } catch (err) {
          if (Date.now() > deadline) throw err;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const done: Promise<void> = attempt()
      .catch((err: unknown) => {
        this.failure = new Error(
          `the ${this.profile.name} profile's delays for replica ${i} were not set: ${(err as Error).message}`,
        );
      })
      .finally(() => this.pending.delete(done));
    this.pending.add(done);
  }

  /** Resolves once every `reapply` so far is done; rejects if one of them gave up. */
  async inForce(): Promise<void> {
    await Promise.all([...this.pending]);
    if (this.failure !== null) throw this.failure;
  }
}
