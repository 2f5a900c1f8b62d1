import {
  chmodSync,
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, SignJWT } from 'jose';
import { z } from 'zod';
import { requestUrl } from './request-url.js';

/*
 * A local identity provider for `creek dev` and other dev-only servers: one ES256 key pair kept in
 * the cluster's data directory, whose public half the replicas verify tokens with (a JWKS file, as
 * they would a real provider's), and a mint for tokens of named dev users. It exists so auth can be
 * tried, and apps run with auth on, without signing up anywhere; nothing in it is fit to face the
 * internet: whoever can reach `devSignInHandler` signs in as anyone.
 */

/** The folder of the data directory that holds the key, and the files in it. */
export const DEV_IDENTITY_DIR = 'dev-identity';
const PRIVATE_KEY_FILE = 'signing-key.jwk.json';
const JWKS_FILE = 'jwks.json';

/** What the dev provider's tokens carry in `iss` and `aud`: the replicas require both. */
export const DEV_ISSUER = 'urn:creek:dev-identity';
export const DEV_AUDIENCE = 'urn:creek:dev';

/** A dev token lives an hour unless asked otherwise, and never past a day. */
export const DEFAULT_DEV_TOKEN_TTL_S = 3_600;
export const MAX_DEV_TOKEN_TTL_S = 86_400;

/** The names a "sign in as" picker offers by default: two plain users and an admin. */
export const DEV_USERS: readonly string[] = ['alice', 'bob', 'admin'];
/** The dev user whose tokens say `{ role: 'admin' }`. */
const ADMIN_USER = 'admin';

/** A dev user's name: short, and safe to show, log and put in a URL as it is. */
export const DevUserName = z
  .string({ error: 'must be a user name' })
  .regex(
    /^[A-Za-z0-9_.@-]{1,64}$/,
    'must be 1 to 64 characters, each a letter, digit or one of _ . @ -',
  );

/** The private key file: an EC P-256 private JWK (anything else is not this provider's key). */
const PrivateJwk = z.object({
  kty: z.literal('EC'),
  crv: z.literal('P-256'),
  x: z.string().min(1),
  y: z.string().min(1),
  d: z.string().min(1),
});
type PrivateJwk = z.infer<typeof PrivateJwk>;

type SigningKey = Awaited<ReturnType<typeof importJWK>>;

/**
 * The dev identity provider of one data directory. The key is made on first use and kept (0600,
 * like the cluster's other secrets), so tokens minted before a restart still verify after it.
 */
export class DevIdentity {
  readonly issuer = DEV_ISSUER;
  readonly audience = DEV_AUDIENCE;

  private constructor(
    /** Absolute path of the public JSON Web Key Set (`--auth-jwks` of every replica). */
    readonly jwksFile: string,
    private readonly key: SigningKey,
    private readonly kid: string,
  ) {}

  /** Whether `dir` holds a dev identity's key (one `open` made there), without making one. */
  static existsIn(dir: string): boolean {
    return (
      statSync(join(resolve(dir), DEV_IDENTITY_DIR, PRIVATE_KEY_FILE), {
        throwIfNoEntry: false,
      })?.isFile() === true
    );
  }

  /**
   * Loads the key kept in `<dir>/dev-identity/`, or makes one there, and (re)writes its JWKS file
   * beside it. Throws, naming the file, if a key file is there but is not a P-256 private JWK.
   */
  static async open(dir: string): Promise<DevIdentity> {
    const home = join(resolve(dir), DEV_IDENTITY_DIR);
    mkdirSync(home, { recursive: true, mode: 0o700 });
    const keyFile = join(home, PRIVATE_KEY_FILE);
    if (statSync(keyFile, { throwIfNoEntry: false }) === undefined) await createKeyFile(keyFile);
    const jwk = readKeyFile(keyFile);
    const publicJwk = { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y };
    const kid = await calculateJwkThumbprint(publicJwk);
    const jwksFile = join(home, JWKS_FILE);
    writeAtomically(
      jwksFile,
      JSON.stringify({ keys: [{ ...publicJwk, kid, alg: 'ES256', use: 'sig' }] }, null, 2) + '\n',
    );
    return new DevIdentity(jwksFile, await importJWK(jwk, 'ES256'), kid);
  }

  /**
   * A token for dev user `user` (`sub`), valid for `ttlS` seconds (default an hour, at most a
   * day). The user named `admin` gets `{ role: 'admin' }` unless `claims` says otherwise; `claims`
   * cannot change the registered claims (sub, iss, aud, iat, exp). Throws on a bad name or ttl.
   */
  async mint(
    user: string,
    options: { claims?: Record<string, unknown>; ttlS?: number } = {},
  ): Promise<{ token: string; expiresAt: number }> {
    const name = DevUserName.safeParse(user);
    if (!name.success)
      throw new Error(`dev user ${JSON.stringify(user)}: ${name.error.issues[0]!.message}`);
    const ttlS = options.ttlS ?? DEFAULT_DEV_TOKEN_TTL_S;
    if (!Number.isInteger(ttlS) || ttlS < 1 || ttlS > MAX_DEV_TOKEN_TTL_S)
      throw new Error(
        `ttl ${String(ttlS)}: must be a whole number of seconds from 1 to ${MAX_DEV_TOKEN_TTL_S}`,
      );
    const iat = Math.floor(Date.now() / 1000);
    const exp = iat + ttlS;
    const token = await new SignJWT({
      ...(user === ADMIN_USER ? { role: 'admin' } : {}),
      ...options.claims,
    })
      .setProtectedHeader({ alg: 'ES256', kid: this.kid, typ: 'JWT' })
      .setSubject(user)
      .setIssuer(this.issuer)
      .setAudience(this.audience)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(this.key);
    return { token, expiresAt: exp * 1000 };
  }
}

/**
 * Makes a key file that appears whole or not at all: written under a temporary name, then linked
 * into place, which fails if another process (a `creek dev token` racing `creek dev`) made one
 * first; that one is then kept, so both use the same key.
 */
async function createKeyFile(keyFile: string): Promise<void> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  const tmp = `${keyFile}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(tmp, JSON.stringify(jwk) + '\n', { mode: 0o600 });
  try {
    linkSync(tmp, keyFile);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(tmp);
  }
}

function readKeyFile(keyFile: string): PrivateJwk {
  // A key file left readable by others (copied around, restored from a backup) is closed again.
  if ((statSync(keyFile).mode & 0o077) !== 0) chmodSync(keyFile, 0o600);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(keyFile, 'utf8'));
  } catch (err) {
    throw new Error(
      `${keyFile}: cannot read the dev identity's key (${err instanceof Error ? err.message : String(err)}); delete the file to make a new key (tokens minted before then stop verifying)`,
    );
  }
  const parsed = PrivateJwk.safeParse(json);
  if (!parsed.success)
    throw new Error(
      `${keyFile}: not the dev identity's key (an EC P-256 private JWK); delete the file to make a new key (tokens minted before then stop verifying)`,
    );
  return parsed.data;
}

/** Writes `file` (0600) so that a reader sees the old content or the new, never a part. */
function writeAtomically(file: string, content: string): void {
  const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(tmp, content, { mode: 0o600 });
  renameSync(tmp, file);
}

/**
 * The HTTP side of the dev provider, for a server that runs only in development (an example's page
 * server, the visualizer with --dev), so a page can offer "sign in as":
 *
 *   GET /dev/users              200 { users }                    the picker's names
 *   GET /dev/sign-in?user=NAME  200 { user, token, expiresAt }   a token for NAME (any valid name)
 *
 * A missing or bad name is 400 `{ error }`, another method on these paths 405. Any other path
 * returns false, untouched, so a server can chain handlers. No CORS headers: a page of another
 * origin cannot read a token from it.
 */
export function devSignInHandler(
  identity: DevIdentity,
  options: { users?: readonly string[] } = {},
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const users = [...(options.users ?? DEV_USERS)];
  for (const u of users) {
    const ok = DevUserName.safeParse(u);
    if (!ok.success)
      throw new Error(`devSignInHandler: user ${JSON.stringify(u)} ${ok.error.issues[0]!.message}`);
  }
  return (req, res) => {
    const url = requestUrl(req.url);
    if (url === null || (url.pathname !== '/dev/users' && url.pathname !== '/dev/sign-in'))
      return false;
    if (req.method !== 'GET') {
      res.setHeader('allow', 'GET');
      send(res, 405, { error: `${url.pathname} takes GET` });
      return true;
    }
    if (url.pathname === '/dev/users') {
      send(res, 200, { users });
      return true;
    }
    const given = url.searchParams.getAll('user');
    if (given.length !== 1) {
      send(res, 400, {
        error:
          given.length === 0
            ? 'give the dev user to sign in as: /dev/sign-in?user=alice'
            : 'give one user',
      });
      return true;
    }
    const user = given[0]!;
    const name = DevUserName.safeParse(user);
    if (!name.success) {
      send(res, 400, { error: `user ${name.error.issues[0]!.message}` });
      return true;
    }
    identity.mint(user).then(
      ({ token, expiresAt }) => send(res, 200, { user, token, expiresAt }),
      (err: unknown) => send(res, 500, { error: err instanceof Error ? err.message : String(err) }),
    );
    return true;
  };
}

function send(res: ServerResponse, status: number, body: object): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}
