import { readFileSync, statSync } from 'node:fs';
import { z } from 'zod';
import { AUTH_OPTIONS, authSettingsShape, checkAuthSettings } from './auth-settings.js';
import type { PeerAddress } from './peer-address.js';
import type { OptionSpecs } from './settings.js';
import { checkTimerSettings, TIMER_OPTIONS, timerSettingsShape } from './timer-settings.js';

/*
 * The settings of `creek start` and `creek dev`: what each is (OptionSpecs, for the parser and the
 * usage) and what a valid value is (a Zod schema, for flags, CREEK_* variables and --config files
 * alike). Each schema message says what is expected; settings.ts puts the setting and the value
 * it was given in front of it.
 */

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const START_OPTIONS = {
  id: { type: 'string', value: 'N', help: "this replica's number, 0-255" },
  listen: { type: 'string', value: 'host:port', help: 'where to serve peers and clients' },
  peers: {
    type: 'string',
    value: '0=ws://h0:p0,...',
    help: 'every replica as id=ws://host:port, comma-separated, this one included; with --join, the running replicas to take the cluster from (this one may be left out, as creek member add prints it)',
  },
  data: { type: 'string', value: 'DIR', path: true, help: "this replica's data directory" },
  'secret-file': {
    type: 'string',
    value: 'FILE',
    path: true,
    help: 'the cluster secret (at least 16 characters), the same on every replica',
  },
  app: {
    type: 'string',
    value: 'FILE',
    path: true,
    help: 'module whose default export is defineApp({...}) (default: built-in ops only)',
  },
  'token-file': {
    type: 'string',
    value: 'FILE',
    path: true,
    help: 'the token clients must present (default: any client may connect)',
  },
  'admin-token-file': {
    type: 'string',
    value: 'FILE',
    path: true,
    help: 'the token /admin requires (default: /admin is off)',
  },
  'monitor-token-file': {
    type: 'string',
    value: 'FILE',
    path: true,
    help: 'a read-only token for /status and /metrics (default: the admin token only)',
  },
  'tls-cert': {
    type: 'string',
    value: 'FILE',
    path: true,
    help: 'PEM certificate: serve wss:// and https:// (needs --tls-key)',
  },
  'tls-key': { type: 'string', value: 'FILE', path: true, help: 'PEM private key of --tls-cert' },
  'tls-ca': {
    type: 'string',
    value: 'FILE',
    path: true,
    help: 'PEM CA certificate(s) to trust besides the system ones',
  },
  'cluster-id': {
    type: 'string',
    value: 'NAME',
    help: "the cluster's name, reported by /health and /ready",
  },
  fsync: { type: 'boolean', help: 'sync every commit to disk (power loss), not just to the OS' },
  'check-invariants': {
    type: 'boolean',
    help: "check the app's invariants on the committed state after each op; log each one broken and count it in /status (costs what the invariants read, per op)",
  },
  join: {
    type: 'boolean',
    help: 'a replica added with `creek member add`: on an empty --data, take the state and the members from --peers (the running replicas) first',
  },
  'checkpoint-every': {
    type: 'string',
    value: 'N',
    help: 'finalized ops between two checkpoints; 0: never (default 10000)',
  },
  workers: {
    type: 'string',
    value: 'N|auto',
    help: 'worker threads that execute ops beside the main thread, 0-64; 0: none; auto: one per core beside the main thread (at most 8), turned off if they do not pay on the workload (default 0)',
  },
  speculation: {
    type: 'string',
    value: 'on|off',
    help: 'off: execute ops only once committed, every answer stable (SMR; default on)',
  },
  reads: {
    type: 'string',
    value: 'leader|quorum',
    help: "how a strong read learns what it must reflect: the leader's read index, or the frontiers of a majority asked directly (across regions, the round trip to the nearest majority; default leader)",
  },
  ...TIMER_OPTIONS,
  'preferred-leader': {
    type: 'string',
    value: 'N',
    help: 'the replica that should lead once it is up and caught up, the same on every replica (default: the lowest-numbered replica up)',
  },
  ...AUTH_OPTIONS,
  'log-level': { type: 'string', value: 'LEVEL', help: `${LOG_LEVELS.join('|')} (default info)` },
} as const satisfies OptionSpecs;

export const DEV_OPTIONS = {
  replicas: { type: 'string', value: 'N', help: 'replica processes, 1-15 (default 3)' },
  app: {
    type: 'string',
    value: 'FILE',
    path: true,
    help: 'module whose default export is defineApp({...}) (default: built-in ops only)',
  },
  data: {
    type: 'string',
    value: 'DIR',
    path: true,
    help: 'data and generated secrets, kept across runs (default .creek/dev)',
  },
  port: {
    type: 'string',
    value: 'N',
    help: 'replica i listens on port N+i, N from 1024 (default 7100)',
  },
  host: { type: 'string', value: 'ADDRESS', help: 'the address to listen on (default 127.0.0.1)' },
  'dev-identity': {
    type: 'string',
    value: 'on|off',
    help: "on: a local identity provider signs dev users in (creek dev token), ops are closed to anonymous callers unless public; off: no users' tokens, every op open (default: on with --app and no --auth-*)",
  },
  ...AUTH_OPTIONS,
  'log-level': { type: 'string', value: 'LEVEL', help: `${LOG_LEVELS.join('|')} (default warn)` },
} as const satisfies OptionSpecs;

/** A whole number from `min` to `max`, given as a number (config file) or digits (flag, env). */
export function wholeNumber(min: number, max: number, expected: string) {
  const message = `must be ${expected}`;
  return z.union([z.number(), z.string()], { error: message }).transform((v, ctx) => {
    const n = typeof v === 'number' ? v : /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
    if (Number.isInteger(n) && n >= min && n <= max) return n;
    ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  });
}

export function text(expected: string) {
  const message = `must be ${expected}`;
  return z.string({ error: message }).trim().min(1, message);
}

const existingFile = text('a file name').refine(
  (f) => statSync(f, { throwIfNoEntry: false })?.isFile() === true,
  {
    message: 'must name an existing file',
  },
);

/** A flag: true given alone; from the environment or a config file, true/false (or 1/0). */
const flag = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0'])], {
    error: 'must be true or false (or 1 or 0)',
  })
  .transform((v) => v === true || v === 'true' || v === '1');

const logLevel = (fallback: (typeof LOG_LEVELS)[number]) =>
  z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }).default(fallback);

/** `host:port`, `[v6 address]:port`; port 0 is refused: peers could not know the port picked. */
const listen = text('host:port, e.g. 0.0.0.0:7100').transform((s, ctx) => {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s[\]]+):(\d+)$/.exec(s);
  if (m === null) {
    ctx.addIssue({ code: 'custom', message: 'must be host:port, e.g. 0.0.0.0:7100' });
    return z.NEVER;
  }
  const port = Number(m[2]);
  if (port < 1 || port > 65_535) {
    ctx.addIssue({ code: 'custom', message: `has port ${m[2]}: a port is from 1 to 65535` });
    return z.NEVER;
  }
  return { host: m[1]!.replace(/^\[(.*)\]$/, '$1'), port };
});

const PEER = /^(\d+)=(wss?:\/\/[^\s,]+?)\/?$/;

/** `0=ws://h0:p0,1=ws://h1:p1` (flag, env) or `["0=ws://h0:p0", ...]` (a config file). */
const peers = z
  .union([z.string(), z.array(z.string())], {
    error: 'must list every replica as id=ws://host:port, comma-separated, this one included',
  })
  .transform((v, ctx): PeerAddress[] => {
    const parts = (typeof v === 'string' ? v.split(',') : v).map((p) => p.trim());
    const out: PeerAddress[] = [];
    for (const part of parts) {
      const m = PEER.exec(part);
      if (m === null || Number(m[1]) > 255) {
        ctx.addIssue({
          code: 'custom',
          message: `has entry '${part}': each must look like 2=ws://10.0.0.3:7100 (id 0-255)`,
        });
        return z.NEVER;
      }
      if (out.some((p) => p.id === Number(m[1]))) {
        ctx.addIssue({ code: 'custom', message: `names replica ${m[1]} twice` });
        return z.NEVER;
      }
      out.push({ id: Number(m[1]), url: m[2]! });
    }
    return out;
  });

export const StartSettingsSchema = z
  .object({
    id: wholeNumber(0, 255, "this replica's number, a whole number from 0 to 255"),
    listen,
    peers,
    data: text('a directory'),
    'secret-file': existingFile,
    app: text('a module file').optional(),
    'token-file': existingFile.optional(),
    'admin-token-file': existingFile.optional(),
    'monitor-token-file': existingFile.optional(),
    'tls-cert': existingFile.optional(),
    'tls-key': existingFile.optional(),
    'tls-ca': existingFile.optional(),
    'cluster-id': z
      .string({ error: 'must be a name' })
      .regex(/^[\w.-]{1,64}$/, "must be 1-64 letters, digits, '_', '.' or '-'")
      .optional(),
    fsync: flag.default(false),
    join: flag.default(false),
    'check-invariants': flag.default(false),
    'checkpoint-every': wholeNumber(
      0,
      Number.MAX_SAFE_INTEGER,
      'a whole number of ops, 0 (never) or more',
    ).optional(),
    workers: z
      .union(
        [z.literal('auto'), wholeNumber(0, 64, 'auto or a whole number of threads from 0 to 64')],
        {
          error: 'must be auto or a whole number of threads from 0 to 64',
        },
      )
      .default(0),
    speculation: z.enum(['on', 'off'], { error: 'must be on or off' }).default('on'),
    reads: z.enum(['leader', 'quorum'], { error: 'must be leader or quorum' }).default('leader'),
    ...timerSettingsShape,
    'preferred-leader': wholeNumber(
      0,
      255,
      'a replica id, a whole number from 0 to 255',
    ).optional(),
    ...authSettingsShape,
    'log-level': logLevel('info'),
  })
  .superRefine((s, ctx) => {
    checkAuthSettings(s, ctx);
    checkTimerSettings(s, ctx);
    // A new member lists the running replicas it asks; the cluster's configuration then wins.
    if (!s.join && !s.peers.some((p) => p.id === s.id))
      ctx.addIssue({
        code: 'custom',
        path: ['peers'],
        message: `must include this replica (--id ${s.id}), or add --join for a replica added with creek member add`,
      });
    if (s.join && s.peers.every((p) => p.id === s.id))
      ctx.addIssue({
        code: 'custom',
        path: ['peers'],
        message: 'with --join, must list the running replicas to take the cluster from',
      });
    // A preferred leader outside the cluster would never lead; with --join, --peers lists only the
    // replicas to ask, and the cluster's own membership decides.
    const preferred = s['preferred-leader'];
    if (preferred !== undefined && !s.join && !s.peers.some((p) => p.id === preferred))
      ctx.addIssue({
        code: 'custom',
        path: ['preferred-leader'],
        message: `must name a replica of --peers (${s.peers.map((p) => p.id).join(', ')})`,
      });
    // A certificate is useless without its key and the other way round; a CA alone enables nothing.
    if (s['tls-cert'] !== undefined && s['tls-key'] === undefined)
      ctx.addIssue({ code: 'custom', path: ['tls-cert'], message: 'needs --tls-key as well' });
    if (s['tls-key'] !== undefined && s['tls-cert'] === undefined)
      ctx.addIssue({ code: 'custom', path: ['tls-key'], message: 'needs --tls-cert as well' });
    if (s['tls-ca'] !== undefined && s['tls-cert'] === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['tls-ca'],
        message: 'needs --tls-cert and --tls-key: a CA alone turns no TLS on',
      });
  });
export type StartSettings = z.output<typeof StartSettingsSchema>;

/** `creek dev`'s replica i listens on port + i: every one of them must be a port one may take. */
const DEV_PORT = 'a port from 1024 to 65535 (ports below 1024 need root)';

export const DevSettingsSchema = z
  .object({
    replicas: wholeNumber(1, 15, 'a whole number from 1 to 15').default(3),
    app: text('a module file').optional(),
    data: text('a directory').default('.creek/dev'),
    port: wholeNumber(1024, 65_535, DEV_PORT).default(7100),
    host: text('an address, e.g. 127.0.0.1').default('127.0.0.1'),
    'dev-identity': z.enum(['on', 'off'], { error: 'must be on or off' }).optional(),
    ...authSettingsShape,
    'log-level': logLevel('warn'),
  })
  .superRefine((s, ctx) => {
    checkAuthSettings(s, ctx);
    if (
      s['dev-identity'] === 'on' &&
      (s['auth-jwks'] !== undefined || s['auth-secret-file'] !== undefined)
    )
      ctx.addIssue({
        code: 'custom',
        path: ['dev-identity'],
        message: `and --${s['auth-jwks'] === undefined ? 'auth-secret-file' : 'auth-jwks'} both given: the replicas verify the tokens of one identity provider, the dev one or yours`,
      });
    if (s.port + s.replicas - 1 > 65_535)
      ctx.addIssue({
        code: 'custom',
        path: ['port'],
        message: `leaves no room for ${s.replicas} replicas (ports ${s.port}-${s.port + s.replicas - 1}): use a port from 1024 to ${65_536 - s.replicas}`,
      });
  });
export type DevSettings = z.output<typeof DevSettingsSchema>;

/** A token or the cluster secret: the file's text, trimmed; at least 16 characters. */
export function readSecretFile(path: string, setting: string): string {
  const s = readSetting(path, setting).trim();
  if (s.length < 16)
    throw new Error(
      `--${setting} ${path}: holds ${s.length} characters, fewer than 16; make a longer one, e.g. openssl rand -hex 24 > ${path}`,
    );
  return s;
}

/** A certificate, key or CA file, as PEM text (what node:tls takes). */
export function readPemFile(path: string, setting: string): string {
  const pem = readSetting(path, setting);
  if (!pem.includes('-----BEGIN '))
    throw new Error(`--${setting} ${path}: not PEM (no -----BEGIN line); give the PEM file`);
  return pem;
}

function readSetting(path: string, setting: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(
      `--${setting} ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)}); check its permissions`,
    );
  }
}
