/**
 * Gossip: Creek's reliable broadcast of Reqs with anti-entropy (Creek §3.2) and the pull of Reqs
 * that CAB needs but a replica lacks (Creek §5, "no loss"). A pure state machine; see gossip.ts.
 *
 * @module @creek/replica/gossip
 */
export {
  Gossip,
  DEFAULT_ANTI_ENTROPY_INTERVAL_MS,
  DEFAULT_MAX_REQS_PER_REPLY,
  type GossipOptions,
  type GossipStats,
} from './gossip.js';
export { seenDots, type GossipMessage, type GossipOutput, type SeenJson } from './messages.js';
export { ReqStore } from './req-store.js';
