import { existsSync, linkSync, openSync, closeSync, unlinkSync, createWriteStream } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import {
  adminRequest,
  errorOf,
  ReplicaUrlSchema,
  responseBody,
  TLS_CA_OPTION,
  URL_OPTION,
} from './admin-request.js';
import { readBackup, type BackupHeader } from './backup-file.js';
import { readPemFile, readSecretFile } from './config.js';
import { commandUsage, readSettings, SettingsError, type OptionSpecs } from './settings.js';

/**
 * `creek backup`: an online backup of a running replica's finalized state, through its admin API
 * (POST /admin/backup, replica-http.ts), into a new file. The replica keeps serving meanwhile. The
 * file is written under a temporary name, read back and checked whole (backup-file.ts), and only
 * then given its name, which must not exist: a backup never overwrites another.
 */

export const BACKUP_OPTIONS = {
  url: URL_OPTION,
  'admin-token-file': {
    type: 'string',
    value: 'FILE',
    path: true,
    help: "the replicas' admin token",
  },
  out: {
    type: 'string',
    value: 'FILE',
    path: true,
    help: 'the backup file to write; it must not exist',
  },
  'tls-ca': TLS_CA_OPTION,
} as const satisfies OptionSpecs;

export const BACKUP_USAGE = commandUsage(
  'backup',
  `A backup of a running cluster: the finalized state of the replica at --url (its data, client
sessions' exactly-once records, at a known committed position), taken online, written to --out
with a sha256 of its content, and checked before it gets its name. Restore it with creek restore.
Exit 1 when the replica refuses (it is learning, rebuilding or halted: ask another) or the
transfer fails; nothing is left at --out then.`,
  BACKUP_OPTIONS,
);

const BackupSettingsSchema = z.object({
  url: ReplicaUrlSchema,
  'admin-token-file': z.string({ error: 'is needed: the file holding the admin token' }).min(1),
  out: z.string({ error: 'is needed: the backup file to write' }).min(1),
  'tls-ca': z.string().min(1).optional(),
});

/** What a backup wrote: its header and checks, read back from the file. */
export interface BackupTaken {
  readonly header: BackupHeader;
  readonly sha256: string;
  readonly stateDigest: string;
  /** How long the replica took to take its cut, if it said. */
  readonly cutMs: number | null;
  readonly seconds: number;
}

/**
 * The backup of the replica at `url` into the new file `out` (resolved): written under a temporary
 * name, read back and checked whole, then linked to `out`, which must not exist. Nothing is left
 * at `out` if anything fails.
 */
export async function takeBackup(params: {
  readonly url: string;
  readonly token: string;
  readonly ca: string | null;
  readonly out: string;
}): Promise<BackupTaken> {
  const { url, token, ca, out } = params;
  const started = Date.now();
  const tmp = join(dirname(out), `.${basename(out)}.partial-${process.pid}`);
  try {
    // 'wx': a leftover of an earlier run with the same pid is not silently reused.
    closeSync(openSync(tmp, 'wx'));
    // No overall deadline (a large state takes its time); a silent connection is given up on.
    const res = await adminRequest({
      base: url,
      method: 'POST',
      path: '/admin/backup',
      token,
      ca,
      idleMs: 60_000,
    });
    if (res.statusCode !== 200)
      throw new Error(`${url}: ${res.statusCode} ${errorOf(await responseBody(res))}`);
    const cutMs = Number(res.headers['x-creek-cut-ms']);
    await pipeline(res, createWriteStream(tmp));
    const { header, sha256, stateDigest } = await readBackup(tmp);
    linkSync(tmp, out); // fails if the file appeared meanwhile: never overwrite
    return {
      header,
      sha256,
      stateDigest,
      cutMs: Number.isFinite(cutMs) ? cutMs : null,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      // Not made, or already gone.
    }
  }
}

/** `creek backup`. */
export async function backup(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const read = readSettings('backup', argv, env, BACKUP_OPTIONS, BackupSettingsSchema);
  if (read.help) return void process.stdout.write(BACKUP_USAGE);
  const s = read.settings;
  const out = resolve(s.out);
  if (existsSync(out))
    throw new SettingsError(`--out ${s.out} exists: a backup never overwrites a file`);
  const token = readSecretFile(s['admin-token-file'], 'admin-token-file');
  const ca = s['tls-ca'] === undefined ? null : readPemFile(s['tls-ca'], 'tls-ca');
  const { header, sha256, stateDigest, cutMs, seconds } = await takeBackup({
    url: s.url,
    token,
    ca,
    out,
  });
  console.log(
    `backed up replica ${header.replica} of cluster ${header.cluster ?? '(unnamed)'} at committed position ${header.finalized}: ${header.keys} keys, state digest ${stateDigest}, sha256 ${sha256}, in ${seconds.toFixed(1)} s (the replica took ${cutMs ?? '?'} ms to take the cut) → ${s.out}`,
  );
}
