import { readFileSync, statSync } from 'node:fs';
import { z } from 'zod';
import type { OptionSpecs } from './settings.js';
import type { UserTokenKeys, UserTokenSettings } from './user-tokens.js';

/*
 * The settings that make a replica verify its users' tokens (`creek start` and `creek dev`): where
 * the keys are, and what the tokens must say. Like every setting, each is a flag, a CREEK_*
 * variable or a --config key, validated by the schema below.
 */

/** A shared HS256 secret shorter than this is refused: RFC 7518 wants at least the hash's size. */
export const MIN_AUTH_SECRET_CHARS = 32;
/** How far a token's `exp` and `nbf` may be off by default, in seconds. */
export const DEFAULT_CLOCK_SKEW_S = 30;

export const AUTH_OPTIONS = {
  'auth-jwks': {
    type: 'string',
    value: 'FILE|URL',
    path: true,
    help: "verify users' tokens (JWTs) with this JSON Web Key Set: the identity provider's URL, or a file; needs --auth-audience",
  },
  'auth-secret-file': {
    type: 'string',
    value: 'FILE',
    path: true,
    help: `verify users' tokens (HS256 JWTs) with the secret in this file (at least ${MIN_AUTH_SECRET_CHARS} characters)`,
  },
  'auth-issuer': {
    type: 'string',
    value: 'ISS',
    help: "the issuer (iss) users' tokens must name (default: any)",
  },
  'auth-audience': {
    type: 'string',
    value: 'AUD',
    help: "the audience (aud) users' tokens must name: this cluster or app (required with --auth-jwks)",
  },
  'auth-clock-skew': {
    type: 'string',
    value: 'SECONDS',
    help: `how far a token's exp and nbf may be off, 0-300 (default ${DEFAULT_CLOCK_SKEW_S})`,
  },
} as const satisfies OptionSpecs;

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** `--auth-jwks`: an http(s) URL (plain http on this machine only), or an existing file. */
const jwks = z
  .string({ error: 'must be a JWKS file or an https:// URL' })
  .trim()
  .min(1, 'must be a JWKS file or an https:// URL')
  .transform((v, ctx): UserTokenKeys => {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(v)) {
      let url: URL;
      try {
        url = new URL(v);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'is not a URL' });
        return z.NEVER;
      }
      if (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname)))
        return { kind: 'jwks-url', url };
      ctx.addIssue({
        code: 'custom',
        message:
          'must be an https:// URL (http:// only on localhost): keys fetched in the clear could be replaced, and with them who may sign in',
      });
      return z.NEVER;
    }
    if (statSync(v, { throwIfNoEntry: false })?.isFile() !== true) {
      ctx.addIssue({ code: 'custom', message: 'must name an existing file or an https:// URL' });
      return z.NEVER;
    }
    return { kind: 'jwks-file', file: v };
  });

const nonEmpty = (what: string) =>
  z
    .string({ error: `must be ${what}` })
    .trim()
    .min(1, `must be ${what}`);

/** The fields AUTH_OPTIONS adds to a command's settings schema. */
export const authSettingsShape = {
  'auth-jwks': jwks.optional(),
  'auth-secret-file': nonEmpty('a file name')
    .refine((f) => statSync(f, { throwIfNoEntry: false })?.isFile() === true, {
      message: 'must name an existing file',
    })
    .optional(),
  'auth-issuer': nonEmpty('an issuer, e.g. https://example.eu.auth0.com/').optional(),
  'auth-audience': nonEmpty("an audience, e.g. your API's identifier").optional(),
  'auth-clock-skew': z
    .union([z.number(), z.string()], { error: 'must be a whole number of seconds, 0-300' })
    .transform((v, ctx) => {
      const n = typeof v === 'number' ? v : /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
      if (Number.isInteger(n) && n >= 0 && n <= 300) return n;
      ctx.addIssue({ code: 'custom', message: 'must be a whole number of seconds, 0-300' });
      return z.NEVER;
    })
    .optional(),
};

export interface AuthSettings {
  readonly 'auth-jwks'?: UserTokenKeys | undefined;
  readonly 'auth-secret-file'?: string | undefined;
  readonly 'auth-issuer'?: string | undefined;
  readonly 'auth-audience'?: string | undefined;
  readonly 'auth-clock-skew'?: number | undefined;
}

/** The rules between the auth settings, for a schema's superRefine. */
export function checkAuthSettings(s: AuthSettings, ctx: z.RefinementCtx): void {
  const jwksGiven = s['auth-jwks'] !== undefined;
  const secretGiven = s['auth-secret-file'] !== undefined;
  if (jwksGiven && secretGiven)
    ctx.addIssue({
      code: 'custom',
      path: ['auth-secret-file'],
      message: 'and --auth-jwks both given: verify tokens with one kind of key',
    });
  if (!jwksGiven && !secretGiven)
    for (const name of ['auth-issuer', 'auth-audience', 'auth-clock-skew'] as const)
      if (s[name] !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: 'needs --auth-jwks or --auth-secret-file: it says what tokens must hold',
        });
  if (jwksGiven && s['auth-audience'] === undefined)
    ctx.addIssue({
      code: 'custom',
      path: ['auth-audience'],
      message:
        "is required with --auth-jwks: a provider signs the tokens of all its apps with the same keys, so without it a token meant for another app would sign in here (give your API's identifier)",
    });
}

/** How the replica verifies tokens, from its settings (null: it verifies none). */
export function userTokenSettings(s: AuthSettings): UserTokenSettings | null {
  const file = s['auth-secret-file'];
  const keys: UserTokenKeys | undefined =
    file === undefined ? s['auth-jwks'] : { kind: 'secret', secret: readAuthSecret(file) };
  if (keys === undefined) return null;
  return {
    keys,
    clockSkewS: s['auth-clock-skew'] ?? DEFAULT_CLOCK_SKEW_S,
    ...(s['auth-issuer'] === undefined ? {} : { issuer: s['auth-issuer'] }),
    ...(s['auth-audience'] === undefined ? {} : { audience: s['auth-audience'] }),
  };
}

function readAuthSecret(file: string): string {
  let secret: string;
  try {
    secret = readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new Error(
      `--auth-secret-file ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)}); check its permissions`,
    );
  }
  if (secret.length < MIN_AUTH_SECRET_CHARS)
    throw new Error(
      `--auth-secret-file ${file}: holds ${secret.length} characters, fewer than ${MIN_AUTH_SECRET_CHARS} (HS256 wants a key as long as its hash); make a longer one, e.g. openssl rand -hex 32 > ${file}`,
    );
  return secret;
}
