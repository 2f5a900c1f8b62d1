import type { ConditionalDelivery } from '../cab/conditional-delivery.js';
import type { MultiPaxos } from '../cab/multi-paxos.js';
import type { Replica } from '../core/replica.js';
import type { Gossip } from '../gossip/gossip.js';

/**
 * The parts a host wires together, as they are now: a state transfer replaces them all
 * (ReplicaHost.load), so those that hold this object read the parts through it, never keep one.
 */
export interface HostParts {
  replica: Replica;
  gossip: Gossip;
  paxos: MultiPaxos;
  delivery: ConditionalDelivery;
}
