/**
 * `@creek/replica/cab`, re-exported: it moved to the replica package, which has no disk or
 * socket dependencies.
 *
 * @module @creek/server/cab
 */
export * from '@creek/replica/cab';
