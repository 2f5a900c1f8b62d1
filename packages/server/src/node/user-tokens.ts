import { readFileSync } from 'node:fs';
import type { JsonValue, User } from '@creek/app';
import { MAX_AUTH_TOKEN_CHARS, MAX_USER_ID_CHARS } from '@creek/protocol';
import type { TokenVerdict } from '@creek/replica/host/connection-auth.js';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  jwtVerify,
  type JWTVerifyGetKey,
  type JWTPayload,
} from 'jose';

/** How long a replica waits for a JWKS URL to answer before it says it cannot verify now. */
export const JWKS_TIMEOUT_MS = 5_000;
/**
 * The least time between two fetches of a JWKS URL: a token naming a key the set lacks makes the
 * replica fetch the set again (the provider rotated its keys), but a flood of such tokens must not
 * make it fetch the set for each.
 */
export const JWKS_COOLDOWN_MS = 30_000;
/** A fetched key set is fetched again after this long, whatever the tokens name. */
export const JWKS_MAX_AGE_MS = 10 * 60_000;

/**
 * Signature algorithms a JWKS key may verify: the asymmetric ones. A key set is public, so an
 * HMAC (HS*) key in it would let anyone who reads it sign tokens; with these alone, a token signed
 * with HS256 and the set's public RSA key as the secret (the HS/RS confusion) is refused before
 * any key is looked at.
 */
const ASYMMETRIC = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];

/** Where a replica finds the keys that sign its users' tokens. */
export type UserTokenKeys =
  /** A JSON Web Key Set, in a file or at an http(s) URL (the identity provider's). */
  | { readonly kind: 'jwks-file'; readonly file: string }
  | { readonly kind: 'jwks-url'; readonly url: URL }
  /** One secret shared with the issuer, for HS256 (a company's own sign-in, a dev setup). */
  | { readonly kind: 'secret'; readonly secret: string };

export interface UserTokenSettings {
  readonly keys: UserTokenKeys;
  /** The `iss` a token must carry, if set. */
  readonly issuer?: string;
  /** The `aud` a token must carry (one of its audiences), if set. */
  readonly audience?: string;
  /** Seconds a token's `exp` and `nbf` may be off by (clocks disagree a little). */
  readonly clockSkewS: number;
  /** JWKS_TIMEOUT_MS by default (tests shorten it). */
  readonly jwksTimeoutMs?: number;
}

/**
 * Verifies the user tokens clients present (JSON Web Tokens from the app's identity provider) with
 * `jose`: the signature against the configured keys, with only the algorithms those keys allow
 * (never `none`), then `exp` and `nbf` with the clock skew, `iss` and `aud`; `sub` and `exp` are
 * required. The replica's driver asks it once per connection and once per refresh, never per op:
 * the verdict goes to the pure layer (ClientConnections.verified) as a TokenVerdict.
 *
 * Every refusal says what was wrong in words a developer can act on. A key set that cannot be
 * fetched (a URL that hangs or serves garbage) is `unavailable`, not a refusal of the token: the
 * client may try again, or at another replica.
 */
export class UserTokenVerifier {
  private readonly getKey: JWTVerifyGetKey | Uint8Array;
  private readonly algorithms: string[];

  constructor(private readonly settings: UserTokenSettings) {
    const keys = settings.keys;
    if (keys.kind === 'secret') {
      this.getKey = new TextEncoder().encode(keys.secret);
      this.algorithms = ['HS256'];
    } else if (keys.kind === 'jwks-file') {
      this.getKey = createLocalJWKSet(readJwksFile(keys.file));
      this.algorithms = ASYMMETRIC;
    } else {
      this.getKey = createRemoteJWKSet(keys.url, {
        timeoutDuration: settings.jwksTimeoutMs ?? JWKS_TIMEOUT_MS,
        cooldownDuration: JWKS_COOLDOWN_MS,
        cacheMaxAge: JWKS_MAX_AGE_MS,
      });
      this.algorithms = ASYMMETRIC;
    }
  }

  /** What `token` is worth at `nowMs` (the wall clock). Never throws. */
  async verify(token: string, nowMs = Date.now()): Promise<TokenVerdict> {
    if (token.length > MAX_AUTH_TOKEN_CHARS)
      return refused(`the token has ${token.length} characters, over ${MAX_AUTH_TOKEN_CHARS}`);
    const s = this.settings;
    let payload: JWTPayload;
    try {
      const options = {
        algorithms: this.algorithms,
        clockTolerance: s.clockSkewS,
        currentDate: new Date(nowMs),
        requiredClaims: ['sub', 'exp'],
        ...(s.issuer === undefined ? {} : { issuer: s.issuer }),
        ...(s.audience === undefined ? {} : { audience: s.audience }),
      };
      // Two calls, not one with a union: each overload of jwtVerify takes one kind of key.
      const result =
        this.getKey instanceof Uint8Array
          ? await jwtVerify(token, this.getKey, options)
          : await jwtVerify(token, this.getKey, options);
      payload = result.payload;
    } catch (err) {
      return this.explain(err);
    }
    const sub = payload.sub;
    if (typeof sub !== 'string' || sub.length === 0 || sub.length > MAX_USER_ID_CHARS)
      return refused(`its subject (sub) must be a user id of 1 to ${MAX_USER_ID_CHARS} characters`);
    const exp = payload.exp!;
    const user: User = { id: sub, claims: payload as Record<string, JsonValue> };
    return { ok: true, user, validForMs: Math.max(0, (exp + s.clockSkewS) * 1000 - nowMs) };
  }

  /** A refusal that says what was wrong with the token, or that the keys could not be had. */
  private explain(err: unknown): TokenVerdict {
    const s = this.settings;
    if (err instanceof errors.JWTExpired)
      return refused(
        `it expired at ${stamp(err.payload.exp)} (${s.clockSkewS} s of clock skew allowed): get a fresh one from the identity provider`,
      );
    if (err instanceof errors.JWTClaimValidationFailed) {
      const p = err.payload;
      switch (err.claim) {
        case 'nbf':
          return refused(`it is not valid before ${stamp(p.nbf)}`);
        case 'iat':
          return refused(`it says it was issued at ${stamp(p.iat)}, in the future`);
        case 'iss':
          return refused(
            `it was issued by ${JSON.stringify(p.iss ?? null)}, and this cluster takes tokens issued by ${JSON.stringify(s.issuer)}`,
          );
        case 'aud':
          return refused(
            `it is meant for ${JSON.stringify(p.aud ?? null)}, and this cluster is ${JSON.stringify(s.audience)} (a token for another cluster or app)`,
          );
        default:
          return refused(
            err.reason === 'missing'
              ? `it has no '${err.claim}' claim, which this cluster requires`
              : `its '${err.claim}' claim is invalid (${err.message})`,
          );
      }
    }
    if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported)
      return refused(
        `it is signed with an algorithm this cluster does not accept (${this.algorithms.join(', ')}${this.settings.keys.kind === 'secret' ? '' : ': its keys are public, so never HS* or none'})`,
      );
    if (err instanceof errors.JWSSignatureVerificationFailed)
      return refused(
        "its signature does not verify with this cluster's keys (forged, or signed with another key)",
      );
    if (err instanceof errors.JWKSNoMatchingKey)
      return refused(
        "no key of this cluster's key set matches it (another provider's or cluster's token, or a key the provider no longer publishes)",
      );
    if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid)
      return refused(`it is not a signed JSON Web Token (${err.message})`);
    const keys = this.settings.keys;
    if (keys.kind === 'jwks-url') {
      const why =
        err instanceof errors.JWKSTimeout
          ? `did not answer within ${(this.settings.jwksTimeoutMs ?? JWKS_TIMEOUT_MS) / 1000} s`
          : `could not be read (${err instanceof Error ? err.message : String(err)})`;
      return {
        ok: false,
        code: 'unavailable',
        message: `this replica cannot verify user tokens now: its key set at ${keys.url.href} ${why}; try again, or another replica`,
      };
    }
    return refused(
      `it could not be verified (${err instanceof Error ? err.message : String(err)})`,
    );
  }
}

function refused(why: string): TokenVerdict {
  return { ok: false, code: 'unauthorized', message: `user token refused: ${why}` };
}

/** A NumericDate claim as an ISO time, for a message. */
function stamp(seconds: unknown): string {
  return typeof seconds === 'number' && Number.isFinite(seconds)
    ? new Date(seconds * 1000).toISOString()
    : String(seconds);
}

/** A JWKS file: `{"keys": [...]}` with at least one key, or an error that names the file. */
export function readJwksFile(file: string): { keys: JsonWebKeyLike[] } {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(
      `--auth-jwks ${file}: cannot read it as JSON (${err instanceof Error ? err.message : String(err)}); give the identity provider's JSON Web Key Set, {"keys": [...]}`,
    );
  }
  const keys = (json as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0 || !keys.every(isKeyObject))
    throw new Error(
      `--auth-jwks ${file}: not a JSON Web Key Set: it must be {"keys": [{"kty": ...}, ...]} with at least one key`,
    );
  if (keys.some((k) => k.kty === 'oct'))
    throw new Error(
      `--auth-jwks ${file}: holds a symmetric key (kty "oct"): a key set is public, so it must hold public keys only; use --auth-secret-file for a shared HS256 secret`,
    );
  return { keys };
}

type JsonWebKeyLike = { kty: string } & Record<string, unknown>;

function isKeyObject(k: unknown): k is JsonWebKeyLike {
  return (
    typeof k === 'object' &&
    k !== null &&
    !Array.isArray(k) &&
    typeof (k as { kty?: unknown }).kty === 'string'
  );
}
