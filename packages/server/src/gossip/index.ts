/**
 * `@creek/replica/gossip`, re-exported: it moved to the replica package, which has no disk or
 * socket dependencies.
 *
 * @module @creek/server/gossip
 */
export * from '@creek/replica/gossip';
