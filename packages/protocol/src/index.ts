/**
 * The Creek wire protocol: every message between clients and replicas, and between replicas, as a
 * Zod schema with its inferred type, plus the codec and the protocol's limits.
 *
 * @module @creek/protocol
 */
export * from './limits.js';
export * from './errors.js';
export * from './json-value.js';
export * from './client.js';
export * from './own-ops.js';
export * from './peer.js';
export * from './peer-versions.js';
export * from './client-versions.js';
export * from './context-token.js';
export * from './seen.js';
export * from './codec.js';
export * from './events.js';
export * from './status.js';
