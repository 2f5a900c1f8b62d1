import { hashHex } from '@creek/replica/core/state-digest.js';

/** The simulated cluster's key for context tokens. */
const SIM_KEY = 'creek simulated cluster: context tokens\n';

/**
 * The simulated cluster's MAC of context tokens: a keyed 128-bit hash, cut to 22 characters (hex
 * digits are base64url characters), where the runtime's (node/context-key.ts) is an HMAC-SHA256
 * under a key derived from the cluster secret. Not cryptographic: the simulator runs in the
 * browser too (the visualizer), without node:crypto, and needs only that every simulated replica
 * signs and accepts the same tokens and that an altered one is refused, deterministically.
 */
export function simContextMac(payload: string): string {
  return hashHex(SIM_KEY + payload).slice(0, 22);
}
