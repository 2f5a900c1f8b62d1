// What replicas exchange to catch a divergence (host/divergence.ts), and the report it makes: types
// of their own, so that the messages and the host's records can name them without the detector.
import type { DivergenceStatus } from '@creek/protocol';

/**
 * A replica's digest of its finalized state at its newest finalized position, carried by every
 * gossip summary it sends (GossipMessage `digest`): what its peers compare with their own.
 */
export interface DigestClaim {
  readonly at: number;
  readonly digest: string;
}

/** The op at a committed position, as a `digests` message names it: [name, origin, eventNo]. */
export type OpLabel = readonly [op: string, replica: number, eventNo: number];

/** What replicas send each other about a divergence (PeerMessage `divergence`). */
export type DivergenceMessage =
  /** Send me your digests once you have finalized position `at`. */
  | { readonly type: 'ask'; readonly at: number }
  /** The sender's digests from position `from` on, and the op at each (null: the state it started from). */
  | {
      readonly type: 'digests';
      readonly from: number;
      readonly digests: readonly string[];
      readonly ops: readonly (OpLabel | null)[];
    };

/** The report of the current divergence (HostStatus `divergence.current`). */
export type DivergenceReport = NonNullable<DivergenceStatus['current']>;
