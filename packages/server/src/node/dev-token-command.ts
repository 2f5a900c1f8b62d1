import { resolve } from 'node:path';
import { z } from 'zod';
import { text, wholeNumber } from './config.js';
import {
  DEFAULT_DEV_TOKEN_TTL_S,
  DevIdentity,
  DevUserName,
  MAX_DEV_TOKEN_TTL_S,
} from './dev-identity.js';
import { commandUsage, readSettings, type OptionSpecs } from './settings.js';

/*
 * `creek dev token`: a user's token from the dev identity provider of a `creek dev` data
 * directory, for a script, curl or a client that signs in (connect({ auth })). It mints with the
 * key `creek dev` made there; it never makes one, since no replica would verify its tokens.
 */

export const DEV_TOKEN_OPTIONS = {
  user: {
    type: 'string',
    value: 'NAME',
    help: "the dev user (the token's sub): 1-64 letters, digits, _ . @ -; admin gets role admin",
  },
  data: {
    type: 'string',
    value: 'DIR',
    path: true,
    help: 'the data directory of the creek dev whose replicas verify it (default .creek/dev)',
  },
  role: {
    type: 'string',
    value: 'ROLE',
    help: "the token's role claim, for apps whose access checks read user.claims.role",
  },
  ttl: {
    type: 'string',
    value: 'SECONDS',
    help: `how long the token is valid, 1-${MAX_DEV_TOKEN_TTL_S} (default ${DEFAULT_DEV_TOKEN_TTL_S})`,
  },
} as const satisfies OptionSpecs;

export const DEV_TOKEN_USAGE = commandUsage(
  'dev token',
  `Prints a user's token (a JWT) from the dev identity provider of a creek dev data directory:
the replicas of that creek dev verify it, and ops see the user as tx.user. Only the token goes
to stdout, so TOKEN=$(creek dev token --user alice) works. For local development only.`,
  DEV_TOKEN_OPTIONS,
);

const DevTokenSettingsSchema = z.object({
  user: DevUserName,
  data: text('a directory').default('.creek/dev'),
  role: z
    .string({ error: 'must be a role' })
    .trim()
    .regex(/^[\w.@:-]{1,64}$/, 'must be 1-64 letters, digits or _ . @ : -')
    .optional(),
  ttl: wholeNumber(
    1,
    MAX_DEV_TOKEN_TTL_S,
    `a whole number of seconds from 1 to ${MAX_DEV_TOKEN_TTL_S}`,
  ).default(DEFAULT_DEV_TOKEN_TTL_S),
});

export async function devToken(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const read = readSettings('dev token', argv, env, DEV_TOKEN_OPTIONS, DevTokenSettingsSchema);
  if (read.help) {
    process.stdout.write(DEV_TOKEN_USAGE);
    return;
  }
  const s = read.settings;
  if (!DevIdentity.existsIn(s.data))
    throw new Error(
      `--data ${s.data}: no dev identity in ${resolve(s.data)}; creek dev makes one there when it starts with the dev identity on (the default with --app): run creek dev --app APP${s.data === '.creek/dev' ? '' : ` --data ${s.data}`} first`,
    );
  const identity = await DevIdentity.open(s.data);
  const { token, expiresAt } = await identity.mint(s.user, {
    ...(s.role === undefined ? {} : { claims: { role: s.role } }),
    ttlS: s.ttl,
  });
  process.stdout.write(`${token}\n`);
  process.stderr.write(
    `creek dev token: ${s.user}${s.role === undefined ? '' : ` (role ${s.role})`}, valid until ${new Date(expiresAt).toISOString()}\n`,
  );
}
