/**
 * A live query of an op that writes, refused by the client (with the app at hand) or by the
 * replica (core/replica.ts words it): its arguments are fine, the op is not one to watch, so the
 * advice is about the op, the same for typed and untyped callers.
 */
export const WATCH_A_READ =
  'watch a read-only op (readOnly: true in its definition), and invoke the ones that write';

/** The replica's refusal, whose first group is the op's name. */
export const WATCHED_WRITE = /^'([^']*)' writes: only read-only ops can be watched$/;
