import { existsSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { ReplicaStatusSchema, type ReplicaStatus } from '@creek/protocol';
import {
  adminRequest,
  errorOf,
  ReplicaUrlSchema,
  responseBody,
  TLS_CA_OPTION,
} from './admin-request.js';
import { takeBackup } from './backup-command.js';
import { readBackup } from './backup-file.js';
import { readPemFile, readSecretFile } from './config.js';
import { NewClusterIdSchema, NewReplicaIdSchema, restoreReplica } from './restore-command.js';
import { commandUsage, readSettings, SettingsError, type OptionSpecs } from './settings.js';

/**
 * `creek recover`: disaster recovery for a cluster that lost a majority of its members' data
 * directories (etcd's `--force-new-cluster`, made of Creek's own backup and restore).
 *
 * Such a cluster decides nothing again, by design: a leader needs a majority's votes, and the lost
 * ones cannot be given back. What can be saved is what a survivor holds. `creek recover` asks every
 * replica it is given for its /status, picks the most advanced survivor that vouches for its state
 * (the most committed ops; one that is learning, rebuilding or halted does not), takes its backup
 * (its finalized state, sessions' exactly-once records included), says which ops the new cluster
 * will not hold (the survivor's ops that were not final: listed by id in the backup's header), and
 * writes the data directory of the first replica of a NEW cluster from it. That replica starts as
 * a cluster of one; the others join it by state transfer (`creek member add`, `creek start
 * --join`), as it prints.
 *
 * Why a new cluster and not the old one forced down to one member: the survivor's accepted but
 * undecided instances may have been decided otherwise by the lost majority, and the lost replicas'
 * votes and op ids are not in anyone's books. A new cluster (new name, new Paxos from its genesis,
 * identities above every old incarnation) shares none of that, so no old replica can ever be taken
 * for one of its members. It refuses to run while the cluster can still decide: then lost replicas
 * are replaced (`creek member replace`), and nothing is lost.
 */

export const RECOVER_OPTIONS = {
  urls: {
    type: 'string',
    value: 'URL,URL,...',
    help: "the old cluster's replicas that still run (https:// when they serve TLS): the most advanced one that vouches for its state is recovered",
  },
  'admin-token-file': {
    type: 'string',
    value: 'FILE',
    path: true,
    help: "the old cluster's admin token",
  },
  'tls-ca': TLS_CA_OPTION,
  out: {
    type: 'string',
    value: 'FILE',
    path: true,
    help: "the backup file of the survivor's state to write (kept: the record of what was recovered); it must not exist",
  },
  data: {
    type: 'string',
    value: 'DIR',
    path: true,
    help: "the data directory of the new cluster's first replica: absent or empty",
  },
  id: { type: 'string', value: 'N', help: "that replica's id in the new cluster, 0-255" },
  'cluster-id': {
    type: 'string',
    value: 'NAME',
    help: "the new cluster's name: not the old cluster's",
  },
} as const satisfies OptionSpecs;

export const RECOVER_USAGE = commandUsage(
  'recover',
  `Disaster recovery for a cluster that lost a majority of its data directories and decides
nothing again: picks the most advanced replica of --urls that vouches for its state, backs it up to
--out, lists the ops the new cluster will not hold, and writes --data for the first replica of a
new cluster named --cluster-id, which then starts alone; the other replicas join it by state
transfer (the command prints how). Refused (exit 1) while the old cluster can still decide: replace
its lost replicas with creek member replace instead. Runbook: docs/runbook.md, "A majority lost".`,
  RECOVER_OPTIONS,
);

const urlList = z
  .string({ error: "is needed: the old cluster's running replicas, comma-separated" })
  .transform((s) => s.split(',').map((u) => u.trim()))
  .pipe(z.array(ReplicaUrlSchema).min(1).max(15, 'lists at most 15 replicas'));

const RecoverSettingsSchema = z.object({
  urls: urlList,
  'admin-token-file': z.string({ error: 'is needed: the file holding the admin token' }).min(1),
  'tls-ca': z.string().min(1).optional(),
  out: z.string({ error: 'is needed: the backup file to write' }).min(1),
  data: z.string({ error: "is needed: the new replica's data directory" }).min(1),
  id: NewReplicaIdSchema,
  'cluster-id': NewClusterIdSchema,
});

/** True when `dir` exists and holds anything; a file where the directory should be is refused. */
function holdsFiles(dir: string): boolean {
  try {
    return readdirSync(dir).length > 0;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return false;
    if (code === 'ENOTDIR') throw new SettingsError(`--data ${dir} is a file, not a directory`);
    throw e;
  }
}

/** What one replica of --urls said. */
type Answer =
  | { readonly url: string; readonly status: ReplicaStatus }
  | { readonly url: string; readonly error: string };

/** Why `s` cannot be the survivor recovered, or null when it can. */
function unfit(s: ReplicaStatus): string | null {
  if (s.halted !== null) return `halted: ${s.halted}`;
  if (s.learning) return 'learning: it lost its data and has not rebuilt it';
  if (s.paused) return 'paused';
  if (s.divergence.current !== null && !s.divergence.current.servesStable)
    return `on the ${s.divergence.current.side} side of a divergence`;
  return null;
}

/** True when `s` says its cluster still decides: a leader it hears, quorate, nothing it waits for. */
function stillDeciding(s: ReplicaStatus): boolean {
  return s.leader !== null && s.quorate && s.waiting === null && !s.learning;
}

function describe(a: Answer): string {
  if ('error' in a) return `  ${a.url}: no answer (${a.error})`;
  const s = a.status;
  const why = unfit(s);
  return `  ${a.url}: replica ${s.id}, ${s.committed} ops committed, ${s.tentative} tentative${s.waiting === null ? '' : `, waiting for ${s.waiting.for}`}${why === null ? '' : ` — not recoverable (${why})`}`;
}

async function statusOf(url: string, token: string, ca: string | null): Promise<Answer> {
  try {
    const res = await adminRequest({
      base: url,
      method: 'GET',
      path: '/status',
      token,
      ca,
      idleMs: 10_000,
    });
    const body = await responseBody(res);
    if (res.statusCode !== 200) return { url, error: `${res.statusCode} ${errorOf(body)}` };
    const parsed = ReplicaStatusSchema.safeParse(body);
    if (!parsed.success) return { url, error: 'its /status is not a Creek replica status' };
    return { url, status: parsed.data };
  } catch (e) {
    return { url, error: e instanceof Error ? e.message : String(e) };
  }
}

/** `creek recover`. */
export async function recover(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const read = readSettings('recover', argv, env, RECOVER_OPTIONS, RecoverSettingsSchema);
  if (read.help) return void process.stdout.write(RECOVER_USAGE);
  const s = read.settings;
  const out = resolve(s.out);
  if (existsSync(out))
    throw new SettingsError(`--out ${s.out} exists: a backup never overwrites a file`);
  // Checked before anything is asked of the replicas: a refusal after the backup would leave
  // the operator halfway.
  if (holdsFiles(s.data))
    throw new SettingsError(
      `--data ${s.data} is not empty: the new cluster's first replica starts from an empty directory, and a recovery never writes over one that may be a replica's`,
    );
  const token = readSecretFile(s['admin-token-file'], 'admin-token-file');
  const ca = s['tls-ca'] === undefined ? null : readPemFile(s['tls-ca'], 'tls-ca');

  const answers = await Promise.all(s.urls.map((url) => statusOf(url, token, ca)));
  console.log(`the replicas of --urls:\n${answers.map(describe).join('\n')}`);
  const live = answers.flatMap((a) => ('status' in a ? [a] : []));
  const deciding = live.find((a) => stillDeciding(a.status));
  if (deciding !== undefined)
    throw new Error(
      `the cluster still decides (replica ${deciding.status.id} at ${deciding.url} hears leader ${deciding.status.leader} of a quorate configuration): nothing needs recovering, and a recovered copy would fork it. Replace lost replicas with creek member replace (docs/runbook.md)`,
    );
  const fit = live
    .filter((a) => unfit(a.status) === null)
    .sort(
      (a, b) =>
        b.status.committed - a.status.committed ||
        b.status.metrics.finalized - a.status.metrics.finalized ||
        a.status.id - b.status.id,
    );
  const chosen = fit[0];
  if (chosen === undefined)
    throw new Error(
      'no replica of --urls can vouch for its state (see above): start a survivor on its data directory and run this again, or restore a new cluster from an earlier backup (creek restore)',
    );
  console.log(
    `recovering replica ${chosen.status.id} (${chosen.url}): the most committed ops of those that vouch for their state`,
  );

  const taken = await takeBackup({ url: chosen.url, token, ca, out });
  const backup = await readBackup(out);
  const dir = restoreReplica({ backup, data: s.data, id: s.id, clusterId: s['cluster-id'] });
  const { header } = taken;
  console.log(
    `backed up its state at committed position ${header.finalized} (${header.keys} keys, state digest ${taken.stateDigest}) → ${s.out} (sha256 ${taken.sha256})`,
  );
  console.log(lostText(header.leftOut, s.out));
  console.log(
    `wrote ${dir}: replica ${s.id} of the new cluster ${s['cluster-id']}. Next:
  1. Stop every replica of the old cluster, and keep their data directories until the new cluster
     serves (a survivor's directory is never started again in the old cluster).
  2. Start the new cluster's first replica alone, with a new secret:
       creek start --id ${s.id} --data ${dir} --cluster-id ${s['cluster-id']} --listen <host:port> --peers ${s.id}=ws://<host:port> --secret-file <a new secret> --admin-token-file <file> [its other settings]
  3. Add each other replica through it, one at a time, on an empty data directory:
       creek member add --url <the first replica's http url> --admin-token-file <file> --id <N> --address ws://<its host:port>
     and start that replica with the --join line it prints.
  4. Point clients at the new replicas (the same --app, and --token-file or --auth-* settings,
     as the old cluster's, and clients keep their tokens).`,
  );
}

/** What the new cluster will not hold, from the backup header's record of it. */
function lostText(
  leftOut: Awaited<ReturnType<typeof readBackup>>['header']['leftOut'],
  file: string,
): string {
  const unknown =
    'Ops that only the lost replicas held (received or committed there and never sent here) cannot be known, and are lost too.';
  if (leftOut === undefined) return `the survivor did not say which ops it left out. ${unknown}`;
  const total = leftOut.committed + leftOut.tentative;
  if (total === 0)
    return `the survivor held no op beyond that position: the new cluster holds everything it held. ${unknown}`;
  const shown = leftOut.ops.slice(0, 20);
  const lines = shown.map(
    (o) =>
      `    ${o.id} ${o.op} (${o.strong ? 'strong' : 'weak'}, ${o.committed ? 'committed, not final: its client may have had its final answer' : 'tentative'})`,
  );
  return [
    `NOT in the new cluster: ${total} ops the survivor held beyond that position — ${leftOut.committed} committed but not final, ${leftOut.tentative} tentative (their clients had at most a tentative answer from the survivor):`,
    ...lines,
    ...(total > shown.length
      ? [
          `    … and ${total - shown.length} more (the first ${leftOut.ops.length} are in the header of ${file}, "leftOut")`,
        ]
      : []),
    unknown,
  ].join('\n');
}
