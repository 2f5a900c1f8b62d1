/**
 * `@creek/replica/host`, re-exported: it moved to the replica package, which has no disk or
 * socket dependencies.
 *
 * @module @creek/server/host
 */
export * from '@creek/replica/host';
