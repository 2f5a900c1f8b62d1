import { z } from 'zod';
import {
  adminRequest,
  errorOf,
  ReplicaUrlSchema,
  responseBody,
  TLS_CA_OPTION,
  URL_OPTION,
} from './admin-request.js';
import { readPemFile, readSecretFile } from './config.js';
import { closestName } from './closest-name.js';
import { commandUsage, readSettings, SettingsError, type OptionSpecs } from './settings.js';

/**
 * `creek member list|add|remove|replace`: an operator's view and changes of a running cluster's
 * membership, through one replica's admin API (GET /members, POST /admin/members/add|remove;
 * node/membership-admin.ts). A change is decided through the ordered log (cab/configuration.ts),
 * one at a time; the command returns once it is in force at the replica asked.
 */

const ACTIONS = ['list', 'add', 'remove', 'replace'] as const;
type Action = (typeof ACTIONS)[number];

export const MEMBER_OPTIONS = {
  url: URL_OPTION,
  'admin-token-file': {
    type: 'string',
    value: 'FILE',
    path: true,
    help: "the replicas' admin token (list also takes the monitor token)",
  },
  id: {
    type: 'string',
    value: 'N',
    help: 'add: the new replica; remove: the one to remove; replace: the one to replace',
  },
  address: {
    type: 'string',
    value: 'ws://host:port',
    help: 'add, replace: where the other replicas reach the new one',
  },
  'new-id': {
    type: 'string',
    value: 'N',
    help: 'replace: the id of the replica that takes the place of --id (never a reused id)',
  },
  'tls-ca': TLS_CA_OPTION,
} as const satisfies OptionSpecs;

export const MEMBER_USAGE = commandUsage(
  'member list|add|remove|replace',
  `The members of a running cluster, and changes to them, through one replica's admin API.
  list     the configuration in force and the newest decided
  add      --id N --address ws://host:port: decided through the log; then start the new replica
           with creek start --join (it takes the cluster's state from its peers)
  remove   --id N: the replica stops (exit 0) once the rest have the change in force
  replace  --id N --new-id M --address ws://host:port: remove N, then add M (for a replica lost
           for good: a new member waits to hear every member, so a dead one goes first)
A change is one member at a time, and returns once in force at the replica asked; exit 1 when
the cluster refuses it or does not decide it within 15 s (it may still be decided: list).`,
  MEMBER_OPTIONS,
);

const id = z
  .string()
  .regex(/^\d{1,3}$/, 'must be a replica id, 0-255')
  .transform(Number)
  .refine((n) => n <= 255, 'must be a replica id, 0-255');

const MemberSettingsSchema = z.object({
  url: ReplicaUrlSchema,
  'admin-token-file': z.string().min(1),
  id: id.optional(),
  address: z
    .string()
    .regex(/^wss?:\/\/[^\s/,]+\/?$/, 'must be ws://host:port (or wss://)')
    .optional(),
  'new-id': id.optional(),
  'tls-ca': z.string().min(1).optional(),
});
type MemberSettings = z.output<typeof MemberSettingsSchema>;

function isAction(a: string): a is Action {
  return (ACTIONS as readonly string[]).includes(a);
}

/** `creek member …`. */
export async function member(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const [action, ...rest] = argv;
  if (action === undefined || action === '--help' || action === '-h') {
    process.stdout.write(MEMBER_USAGE);
    return;
  }
  if (!isAction(action)) {
    const near = closestName(action, [...ACTIONS]);
    throw new SettingsError(
      `unknown action '${action}'${near === undefined ? '' : `: did you mean '${near}'?`}; actions: ${ACTIONS.join(', ')}`,
    );
  }
  const read = readSettings(`member ${action}`, rest, env, MEMBER_OPTIONS, MemberSettingsSchema);
  if (read.help) {
    process.stdout.write(MEMBER_USAGE);
    return;
  }
  const s = read.settings;
  const need = (setting: 'id' | 'address' | 'new-id'): void => {
    if (s[setting] === undefined)
      throw new SettingsError(`member ${action} needs --${setting} (creek member --help)`);
  };
  if (action !== 'list') need('id');
  if (action === 'add' || action === 'replace') need('address');
  if (action === 'replace') need('new-id');
  const api = new AdminApi(s);
  if (action === 'list') return void console.log(formatMembers(await api.members()));
  if (action === 'remove') return void (await api.change('remove', { id: s.id! }));
  if (action === 'replace') {
    if (s['new-id'] === s.id)
      throw new SettingsError(
        'member replace needs a --new-id other than --id: ids are never reused',
      );
    await api.change('remove', { id: s.id! });
  }
  const added = action === 'add' ? s.id! : s['new-id']!;
  const members = await api.change('add', { id: added, url: s.address!.replace(/\/$/, '') });
  console.log(
    `start it with: creek start --join --id ${added} --listen <host:port> --data <an empty directory> --peers ${members
      .filter((m) => m.id !== added)
      .map((m) => `${m.id}=${m.url}`)
      .join(',')} --secret-file <the cluster secret> [the other settings of its peers]`,
  );
}

interface MemberView {
  readonly id: number;
  readonly url: string;
}
const MembersSchema = z.object({
  replica: z.number(),
  leader: z.number().nullable(),
  current: z.object({
    from: z.number(),
    members: z.array(z.object({ id: z.number(), url: z.string() })),
    retired: z.array(z.number()),
  }),
  latest: z.object({
    from: z.number(),
    members: z.array(z.object({ id: z.number(), url: z.string() })),
    retired: z.array(z.number()),
  }),
  changing: z.boolean(),
});

function formatMembers(m: z.output<typeof MembersSchema>): string {
  const lines = m.current.members.map(
    (x) =>
      `${String(x.id).padStart(3)}  ${x.url}${x.id === m.leader ? '  (leader)' : ''}${x.id === m.replica ? '  (asked)' : ''}`,
  );
  if (m.changing)
    lines.push(
      `a change is on its way: from instance ${m.latest.from} the members are ${m.latest.members.map((x) => x.id).join(', ')}`,
    );
  if (m.current.retired.length > 0) lines.push(`removed before: ${m.current.retired.join(', ')}`);
  return lines.join('\n');
}

/** The admin API of the replica at --url. */
class AdminApi {
  private readonly token: string;
  private readonly ca: string | null;
  constructor(private readonly s: MemberSettings) {
    this.token = readSecretFile(s['admin-token-file'], 'admin-token-file');
    this.ca = s['tls-ca'] === undefined ? null : readPemFile(s['tls-ca'], 'tls-ca');
  }

  async members(): Promise<z.output<typeof MembersSchema>> {
    const { status, body } = await this.call('GET', '/members');
    if (status !== 200) throw new Error(`GET /members: ${status} ${errorOf(body)}`);
    const parsed = MembersSchema.safeParse(body);
    if (!parsed.success) throw new Error(`${this.s.url} answered /members with something else`);
    return parsed.data;
  }

  /** A change, once in force at the replica asked: the members it made. */
  async change(
    action: 'add' | 'remove',
    params: Record<string, string | number>,
  ): Promise<readonly MemberView[]> {
    const query = new URLSearchParams(
      Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]),
    ).toString();
    const { status, body } = await this.call('POST', `/admin/members/${action}?${query}`);
    if (status !== 200) throw new Error(`${action} ${query}: ${errorOf(body)}`);
    const members =
      (body as { members?: { members?: MemberView[] } }).members?.members ?? ([] as MemberView[]);
    console.log(
      `${action === 'add' ? 'added' : 'removed'} replica ${params.id}: the members are ${members.map((m) => m.id).join(', ')}`,
    );
    return members;
  }

  private async call(
    method: 'GET' | 'POST',
    path: string,
  ): Promise<{ status: number; body: unknown }> {
    const res = await adminRequest({
      base: this.s.url,
      method,
      path,
      token: this.token,
      ca: this.ca,
      // The replica answers a change within 15 s (MEMBERSHIP_TIMEOUT_MS).
      idleMs: 20_000,
    });
    return { status: res.statusCode ?? 0, body: await responseBody(res) };
  }
}
