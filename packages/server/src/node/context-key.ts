import { createHmac } from 'node:crypto';

/** What the key of context tokens is derived for: a token is good for nothing else. */
const PURPOSE = 'creek context tokens v1';

/**
 * The MAC of context tokens (@creek/protocol context-token.ts) under a key derived from the cluster
 * secret (`--secret-file`): every replica of a cluster signs and accepts the same tokens, another
 * cluster's are refused, and a key for this purpose alone says nothing of the secret peers prove.
 * HMAC-SHA256, cut to 22 base64url characters (132 bits).
 */
export function contextMac(secret: string): (payload: string) => string {
  const key = createHmac('sha256', secret).update(PURPOSE).digest();
  return (payload) => createHmac('sha256', key).update(payload).digest('base64url').slice(0, 22);
}
