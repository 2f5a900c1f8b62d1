import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { restoredCheckpoint } from '@creek/replica/host/backup.js';
import { readBackup } from './backup-file.js';
import { ensureWritableDir } from './data-dir.js';
import { commandUsage, readSettings, SettingsError, type OptionSpecs } from './settings.js';
import { SqliteStorage } from './storage.js';

/**
 * `creek restore`: the data directory of one replica of a NEW cluster whose state is a backup's
 * (backup-file.ts). Every replica of the new cluster is restored from the same file, each with its
 * own --id, then started with `creek start` and the new cluster's --peers and secret.
 *
 * Why a new cluster, and why each replica from the file: the directory holds the backup's state at
 * its position and nothing else of the old cluster — no op of its own, no Paxos vote or promise,
 * no identity — so the replica starts as a new one does (host/identity.ts): it learns from its
 * peers, then numbers its ops under an identity above every incarnation the backup knew of, and
 * the cluster's Paxos starts from its genesis. The old cluster's replicas must never be its peers
 * (its votes and op ids are not in the new one's books): hence --cluster-id, a new name.
 */

export const RESTORE_OPTIONS = {
  from: {
    type: 'string',
    value: 'FILE',
    path: true,
    help: 'the backup file (creek backup --out)',
  },
  data: {
    type: 'string',
    value: 'DIR',
    path: true,
    help: "the new replica's data directory: absent or empty",
  },
  id: { type: 'string', value: 'N', help: "the new replica's id in the new cluster, 0-255" },
  'cluster-id': {
    type: 'string',
    value: 'NAME',
    help: "the new cluster's name: not the backed-up cluster's",
  },
} as const satisfies OptionSpecs;

export const RESTORE_USAGE = commandUsage(
  'restore',
  `The data directory of one replica of a new cluster whose state is a backup's: run it for each
replica of the new cluster, with the same --from, then start them with creek start --data DIR
--cluster-id NAME and the new cluster's --peers and secret. The file is checked whole first: a
truncated, damaged or foreign file is refused (exit 1), and so is a --data that is not empty.`,
  RESTORE_OPTIONS,
);

/** `--id` of a new cluster's replica (creek restore, creek recover). */
export const NewReplicaIdSchema = z
  .string({ error: 'is needed: the new replica id, 0-255' })
  .regex(/^\d{1,3}$/, 'must be a replica id, 0-255')
  .transform(Number)
  .refine((n) => n <= 255, 'must be a replica id, 0-255');

/** `--cluster-id` of a new cluster (creek restore, creek recover). */
export const NewClusterIdSchema = z
  .string({ error: "is needed: the new cluster's name" })
  .regex(/^[\w.-]{1,64}$/, "must be 1-64 letters, digits, '_', '.' or '-'");

const RestoreSettingsSchema = z.object({
  from: z.string({ error: 'is needed: the backup file' }).min(1),
  data: z.string({ error: 'is needed: the new replica data directory' }).min(1),
  id: NewReplicaIdSchema,
  'cluster-id': NewClusterIdSchema,
});

/**
 * Writes the data directory `data` of replica `id` of the new cluster `clusterId` from the checked
 * backup `backup`: refused when the cluster id is the backed-up cluster's or the directory is not
 * empty. Returns the directory, resolved.
 */
export function restoreReplica(params: {
  readonly backup: Awaited<ReturnType<typeof readBackup>>;
  readonly data: string;
  readonly id: number;
  readonly clusterId: string;
}): string {
  const { header, snapshot } = params.backup;
  if (header.cluster !== null && header.cluster === params.clusterId)
    throw new SettingsError(
      `--cluster-id ${params.clusterId} is the backed-up cluster's: a restore makes a new cluster, never one its old replicas could take for their own; give it a new name`,
    );
  const dir = ensureWritableDir(params.data);
  const present = readdirSync(dir);
  if (present.length > 0)
    throw new SettingsError(
      `--data ${params.data} is not empty (it holds ${present.slice(0, 3).join(', ')}${present.length > 3 ? ', …' : ''}): a restore starts a new replica, and never writes over a directory that may be one`,
    );
  const storage = SqliteStorage.open(dir, { replicaId: params.id, fsync: true });
  try {
    storage.append([{ layer: 'checkpoint', record: restoredCheckpoint(snapshot) }]);
  } finally {
    storage.close();
  }
  return dir;
}

/** `creek restore`. */
export async function restore(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const read = readSettings('restore', argv, env, RESTORE_OPTIONS, RestoreSettingsSchema);
  if (read.help) return void process.stdout.write(RESTORE_USAGE);
  const s = read.settings;
  const backup = await readBackup(resolve(s.from));
  const { header, sha256, stateDigest } = backup;
  const dir = restoreReplica({ backup, data: s.data, id: s.id, clusterId: s['cluster-id'] });
  console.log(
    `restored replica ${s.id} of the new cluster ${s['cluster-id']} in ${dir}: ${header.keys} keys at committed position ${header.finalized} of cluster ${header.cluster ?? '(unnamed)'}, state digest ${stateDigest} (backup sha256 ${sha256}).
Restore every replica of the new cluster from this same file, then start each with: creek start --id ${s.id} --data ${dir} --cluster-id ${s['cluster-id']} --peers <the new cluster's replicas> --secret-file <the new cluster's secret> [its other settings]`,
  );
}
