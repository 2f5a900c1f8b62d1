import type { PaxosMessage } from '../cab/messages.js';
import type { GossipMessage } from '../gossip/messages.js';
import type { TransferMessage } from './state-transfer.js';

/** What replicas send each other: gossip (Reqs), Paxos (ids) and state transfers (checkpoints). */
export type PeerMessage =
  | { readonly kind: 'gossip'; readonly msg: GossipMessage }
  | { readonly kind: 'paxos'; readonly msg: PaxosMessage }
  | { readonly kind: 'transfer'; readonly msg: TransferMessage };
