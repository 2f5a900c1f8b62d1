import type { Prng } from './prng.js';
import { WanLinks, type SimWan } from './wan.js';

export interface NetworkConfig {
  /** One-way delay is uniform in [minDelayMs, maxDelayMs]; a wide range reorders messages. */
  readonly minDelayMs: number;
  readonly maxDelayMs: number;
  /** Probability that one transmission is lost. */
  readonly lossRate: number;
  /** Probability that a message is delivered twice. */
  readonly duplicateRate: number;
  /** Time after which a lost or blocked transmission is tried again. */
  readonly retransmitMs: number;
  /**
   * A WAN profile (sim/wan.ts): each link's delay is its regions' one-way delay with the profile's
   * jitter, in place of [minDelayMs, maxDelayMs]. Absent or null: the uniform delays.
   */
  readonly wan?: SimWan | null;
}

/** A transmission on its way (SimNetwork.trackFlights): when it left and when it will arrive. */
export interface Flight<M> {
  readonly from: number;
  readonly to: number;
  readonly msg: M;
  readonly sentAt: number;
  readonly arriveAt: number;
}

export interface Transmission<M> {
  readonly from: number;
  readonly to: number;
  readonly msg: M;
  /** Retransmitted until delivered (a reliable link), or sent once and possibly lost. */
  readonly reliable: boolean;
}

/**
 * The simulated network between hosts. Links are lossy, duplicate and reorder, and can be cut by
 * partitions; each message is retransmitted until one copy gets through, so a message between two
 * hosts that are (eventually) connected is (eventually) delivered: the reliable channel that Creek's
 * reliable broadcast assumes (§3.2). Gossip with anti-entropy replaces this retransmission in the
 * CAB issue; until then it is the simulator's model of a retransmitting link.
 */
export class SimNetwork<M> {
  private readonly blocked = new Set<string>();
  private inFlightCount = 0;
  sent = 0;
  delivered = 0;
  lost = 0;
  /** Transmissions on their way, when a viewer asked for them (`trackFlights`); else null. */
  private flights: Set<Flight<M>> | null = null;
  /** The links' delays when the run is on a WAN profile; else null (uniform delays). */
  private links: WanLinks | null;

  constructor(
    private readonly prng: Prng,
    private config: NetworkConfig,
    /** Schedules a callback at a simulated time. */
    private readonly schedule: (at: number, run: () => void) => void,
    private readonly deliver: (t: Transmission<M>) => void,
    /** The host a node runs on; partitions cut links between hosts. */
    private readonly hostOf: (node: number) => number = (node) => node,
    /** Whether a node is up to receive; a message to a node that is down is lost. */
    private readonly isUp: (node: number) => boolean = () => true,
  ) {
    this.links = linksOf(config);
  }

  /**
   * Keeps the transmissions on their way from now on (`inFlight`), for the visualizer. It draws no
   * random number and schedules nothing: the run is the same with it as without.
   */
  trackFlights(): void {
    this.flights ??= new Set();
  }

  /** Transmissions on their way now, in the order they were sent (empty unless tracked). */
  flying(): readonly Flight<M>[] {
    return this.flights === null ? [] : [...this.flights];
  }

  send(now: number, from: number, to: number, msg: M, reliable = true): void {
    this.sent++;
    if (reliable) this.inFlightCount++;
    this.attempt(now, { from, to, msg, reliable }, true);
  }

  private attempt(now: number, t: Transmission<M>, first: boolean): void {
    const from = this.hostOf(t.from);
    const to = this.hostOf(t.to);
    if (from === to) {
      this.schedule(now, () => this.arrive(now, t));
      return;
    }
    if (this.blocked.has(`${from}>${to}`) || this.prng.chance(this.config.lossRate)) {
      this.lose(now, t);
      return;
    }
    // One draw either way, so that a run's other draws are where they were.
    const delay =
      this.links === null
        ? this.prng.float(this.config.minDelayMs, this.config.maxDelayMs)
        : this.links.delay(from, to, this.prng.float(0, 1));
    const flight = this.fly(t, now, now + delay);
    this.schedule(now + delay, () => {
      this.flights?.delete(flight);
      this.arrive(now + delay, t);
    });
    if (first && this.prng.chance(this.config.duplicateRate)) {
      const again =
        this.links === null
          ? this.prng.float(this.config.minDelayMs, this.config.maxDelayMs * 2)
          : this.links.delay(from, to, 1) * this.prng.float(1, 2);
      const copy = this.fly(t, now, now + again);
      this.schedule(now + again, () => {
        this.flights?.delete(copy);
        if (this.isUp(t.to)) this.deliver(t);
      });
    }
  }

  private fly(t: Transmission<M>, sentAt: number, arriveAt: number): Flight<M> {
    const f = { from: t.from, to: t.to, msg: t.msg, sentAt, arriveAt };
    this.flights?.add(f);
    return f;
  }

  private lose(now: number, t: Transmission<M>): void {
    this.lost++;
    if (t.reliable) {
      const at = now + this.config.retransmitMs;
      this.schedule(at, () => this.attempt(at, t, false));
    }
  }

  private arrive(now: number, t: Transmission<M>): void {
    if (!this.isUp(t.to)) {
      this.lose(now, t);
      return;
    }
    if (t.reliable) this.inFlightCount--;
    this.delivered++;
    this.deliver(t);
  }

  /** Cuts the links from every host in `from` to every host in `to` (one way). */
  block(from: readonly number[], to: readonly number[]): void {
    for (const x of from) for (const y of to) if (x !== y) this.blocked.add(`${x}>${y}`);
  }

  /** Cuts every link between hosts of different groups, both ways. */
  partition(groups: readonly (readonly number[])[]): void {
    this.blocked.clear();
    for (const a of groups) {
      for (const b of groups) {
        if (a === b) continue;
        for (const x of a) for (const y of b) this.blocked.add(`${x}>${y}`);
      }
    }
  }

  heal(): void {
    this.blocked.clear();
  }

  setConfig(config: NetworkConfig): void {
    this.config = config;
    this.links = linksOf(config);
  }

  /** Whether the link from host `from` to host `to` is cut now (a partition, or one way). */
  isBlocked(from: number, to: number): boolean {
    return this.blocked.has(`${from}>${to}`);
  }

  isPartitioned(): boolean {
    return this.blocked.size > 0;
  }

  /** Reliable messages sent and not yet delivered (duplicates aside). */
  inFlight(): number {
    return this.inFlightCount;
  }
}

function linksOf(config: NetworkConfig): WanLinks | null {
  return config.wan === undefined || config.wan === null ? null : new WanLinks(config.wan);
}
