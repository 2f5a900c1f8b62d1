import type { JsonValue } from '@creek/app';

/**
 * What the client reads in a user's token, without verifying it: the replicas verify every token
 * (signature, expiry, issuer, audience), and a client cannot (it holds no key, and the token is
 * its own). It reads the payload only to plan (when to ask for a fresh token) and to show (the
 * claims of the user a replica accepted).
 */
export interface TokenPayload {
  /** `sub`: whose token it is, as the token says. */
  readonly sub: string | undefined;
  /** `exp`: when it expires, in ms since the epoch. */
  readonly expiresAt: number | undefined;
  readonly claims: Readonly<Record<string, JsonValue>>;
}

/**
 * The payload of `token`, or null when it is not a JSON Web Token (an opaque token, say): the
 * second of its three dot-separated parts, base64url-encoded UTF-8 JSON (RFC 7519). Decoded here,
 * by hand, rather than with a library's decodeJwt: jose's, the maintained one, needs TextEncoder
 * and TextDecoder when it loads, which React Native's Hermes lacks; `decodeURIComponent` decodes
 * UTF-8 everywhere.
 */
export function readToken(token: string): TokenPayload | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  const text = base64urlText(parts[1]!);
  let claims: unknown;
  try {
    claims = text === null ? null : JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) return null;
  const { sub, exp } = claims as { sub?: unknown; exp?: unknown };
  return {
    sub: typeof sub === 'string' ? sub : undefined,
    expiresAt: typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : undefined,
    claims: claims as Record<string, JsonValue>,
  };
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** The UTF-8 text `encoded` holds in base64url (unpadded), or null if it holds none. */
function base64urlText(encoded: string): string | null {
  let bits = 0;
  let value = 0;
  let percent = '';
  for (const ch of encoded) {
    const sextet = BASE64URL.indexOf(ch);
    if (sextet < 0) return null;
    value = ((value << 6) | sextet) & 0xffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      percent += `%${((value >> bits) & 0xff).toString(16).padStart(2, '0')}`;
    }
  }
  try {
    return decodeURIComponent(percent);
  } catch {
    return null; // not UTF-8
  }
}

/** The longest the client asks for a fresh token ahead of its expiry: a minute. */
const MAX_REFRESH_LEAD_MS = 60_000;
/** A failed refresh is tried again only while this much of the token's life is left. */
export const MIN_RETRY_MS = 1_000;

/**
 * How long from `now` to wait before asking for a fresh token that expires at `expiresAt`: when
 * half its remaining life is left, and at most a minute before it expires (a replica asks at the
 * same point of the life it allows, its clock skew added, so the client's timer usually comes
 * first and the replica's `auth-expiring` is the fallback). Null: no timer, because the token
 * names no expiry, or it has expired already by this clock (clocks disagree: the replica
 * decides, and says so).
 */
export function refreshDelayMs(expiresAt: number | undefined, now: number): number | null {
  if (expiresAt === undefined) return null;
  const remaining = expiresAt - now;
  if (!(remaining > 0)) return null;
  return remaining - Math.min(MAX_REFRESH_LEAD_MS, remaining / 2);
}
