/**
 * Error codes on the wire. Each error frame also carries a message that says what to do.
 * - bad-frame: not parseable, not valid for its type, or too large: fix the sender.
 * - version: the peer speaks another protocol version: upgrade one side.
 * - unauthorized: missing or wrong token (clients) or cluster secret (peers); for an op, the op
 *   needs a signed-in user (or is closed to end users) and was not applied.
 * - forbidden: the signed-in user may not call this op (its access check said no); the op was not
 *   applied. Sent only to clients that present user tokens.
 * - invalid-arguments: the op's arguments failed its schema; nothing was ordered.
 * - unknown-op: the app has no such operation.
 * - busy: too many invocations in flight on this connection; wait for responses.
 * - out-of-order: a frame that is not allowed yet (an invoke before hello, say).
 * - unavailable: the replica takes no ops now (paused, shutting down, still catching up); the op
 *   was not taken: retry at another replica.
 */
export const ERROR_CODES = [
  'bad-frame',
  'version',
  'unauthorized',
  'invalid-arguments',
  'unknown-op',
  'busy',
  'out-of-order',
  'unavailable',
  'forbidden',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];
