import type { PaxosMessage } from '../cab/messages.js';
import type { GossipMessage } from '../gossip/messages.js';
import type { DivergenceMessage } from './divergence-messages.js';
import type { TransferMessage } from './state-transfer.js';

/**
 * What replicas send each other: gossip (Reqs), Paxos (ids), state transfers (checkpoints) and,
 * when their states differ, their digests (divergence).
 */
export type PeerMessage =
  | { readonly kind: 'gossip'; readonly msg: GossipMessage }
  | { readonly kind: 'paxos'; readonly msg: PaxosMessage }
  | { readonly kind: 'transfer'; readonly msg: TransferMessage }
  | { readonly kind: 'divergence'; readonly msg: DivergenceMessage };
