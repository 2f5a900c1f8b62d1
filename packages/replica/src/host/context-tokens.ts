import { contextTokenPayload, maxSeen, readContextToken, type ServerFrame } from '@creek/protocol';

/** What a client presenting or asking for a context token is told by a replica that signs none. */
export const NO_CONTEXTS =
  'this replica signs and takes no context tokens (it was started without a key for them)';

/**
 * The replica's side of context tokens (protocol context-token.ts): it signs a session's context
 * on request, and checks the tokens hellos present. The MAC is the driver's (`mac`: HMAC-SHA256
 * under a key derived from the cluster secret in the runtime, node/context-key.ts; the simulator
 * uses a key of its own), so this stays pure and every replica of a cluster accepts the others'
 * tokens.
 */
export class ContextTokens {
  constructor(
    /** The MAC of a token's payload: 22 base64url characters. */
    private readonly mac: (payload: string) => string,
  ) {}

  /** A token covering `seen` (per origin, a count of ops). */
  sign(seen: readonly number[]): string {
    const payload = contextTokenPayload(seen);
    return `${payload}.${this.mac(payload)}`;
  }

  /**
   * The counts of a token this cluster signed, or why it is refused: not a token, or not one a
   * replica of this cluster made (another cluster's, or altered).
   */
  open(
    token: string,
  ):
    | { readonly ok: true; readonly seen: number[] }
    | { readonly ok: false; readonly message: string } {
    const read = readContextToken(token);
    if (!read.ok) return read;
    if (!sameText(this.mac(read.payload), read.mac))
      return {
        ok: false,
        message:
          "this context token was not signed by this cluster (altered, or another cluster's): ask a client of this cluster for one with client.context()",
      };
    return { ok: true, seen: read.seen };
  }
}

/**
 * A replica's answer to a context request `n` it has caught up with: a token covering what the
 * session saw (`seen`, which the replica holds) and everything the replica holds (`have`), the
 * session's own ops there included; or, at a replica without a key, why it gives none.
 */
export function answerContext(
  contexts: ContextTokens | null,
  n: number,
  seen: readonly number[] | undefined,
  have: readonly number[],
): Extract<ServerFrame, { t: 'context' }> {
  if (contexts === null) return { t: 'context', n, code: 'unavailable', message: NO_CONTEXTS };
  return { t: 'context', n, token: contexts.sign(maxSeen(seen, have)) };
}

/** Compares two MACs in time that does not depend on where they first differ. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
