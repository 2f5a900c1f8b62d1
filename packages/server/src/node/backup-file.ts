/**
 * The backup file (`creek backup`, `creek restore`): JSON lines, so that a replica streams it
 * without building it whole and a reader checks it line by line.
 *
 *   line 1        the header: format name and version, the cluster and replica it came from,
 *                 when, the finalized position, the key count, the causal context and clock,
 *                 the members then, and the ops the replica held that the backup leaves out
 *                 (not final at the cut: counts, and the first of them by id)
 *   lines 2..K+1  the state, one `[key, value]` per line, in the replica's checkpoint order
 *   last line     `{"end":true,"keys":K,"stateDigest":HEX,"sha256":HEX}`: the state's
 *                 StateDigest (what `/status` reports as `digest`), and the sha256 of every byte
 *                 before this line. Both are computed as the lines are written, so the replica
 *                 takes its cut without hashing 100,000 keys first.
 *
 * A file cut anywhere lacks its end line (or its last line is not one); a byte changed anywhere
 * before it changes the sha256; and the state read back must have the end line's StateDigest, a
 * second check computed from the content itself.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import type { JsonValue } from '@creek/app';
import type { BackupSnapshot } from '@creek/replica/host/backup.js';
import { StateDigest } from '@creek/replica/core/state-digest.js';

export const BACKUP_FORMAT = 'creek-backup';
export const BACKUP_VERSION = 1;

const HeaderSchema = z.object({
  format: z.literal(BACKUP_FORMAT),
  version: z.number().int(),
  cluster: z.string().nullable(),
  replica: z.number().int().nonnegative(),
  createdAt: z.string(),
  finalized: z.number().int().nonnegative(),
  keys: z.number().int().nonnegative(),
  hlc: z.number().nonnegative(),
  known: z.record(z.string(), z.array(z.number().int().nonnegative())),
  members: z.array(z.object({ id: z.number().int(), address: z.string() })),
  // Optional: files written before it was kept are read the same.
  leftOut: z
    .object({
      committed: z.number().int().nonnegative(),
      tentative: z.number().int().nonnegative(),
      ops: z.array(
        z.object({ id: z.string(), op: z.string(), strong: z.boolean(), committed: z.boolean() }),
      ),
    })
    .optional(),
});
export type BackupHeader = z.output<typeof HeaderSchema>;

const TrailerSchema = z.object({
  end: z.literal(true),
  keys: z.number().int().nonnegative(),
  stateDigest: z.string().regex(/^[0-9a-f]{32}$/),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});

/** Lines per chunk a replica writes: a few hundred KB, so that the stream applies backpressure. */
const LINES_PER_CHUNK = 1_000;

/** The file's bytes, in chunks: what the replica streams for `POST /admin/backup`. */
export function* backupChunks(
  origin: { readonly cluster: string | null; readonly replica: number; readonly createdAt: Date },
  b: BackupSnapshot,
): Generator<string> {
  const hash = createHash('sha256');
  const digest = new StateDigest();
  const header: BackupHeader = {
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    cluster: origin.cluster,
    replica: origin.replica,
    createdAt: origin.createdAt.toISOString(),
    finalized: b.finalized,
    keys: b.state.length,
    hlc: b.hlc,
    known: b.known as Record<string, number[]>,
    members: [...b.members],
    ...(b.leftOut === undefined ? {} : { leftOut: { ...b.leftOut, ops: [...b.leftOut.ops] } }),
  };
  let chunk = `${JSON.stringify(header)}\n`;
  for (let i = 0; i < b.state.length; i++) {
    const [key, value] = b.state[i]!;
    digest.set(key, value);
    chunk += `${JSON.stringify([key, value])}\n`;
    if ((i + 1) % LINES_PER_CHUNK === 0) {
      hash.update(chunk);
      yield chunk;
      chunk = '';
    }
  }
  hash.update(chunk);
  const end = {
    end: true,
    keys: b.state.length,
    stateDigest: digest.hex(),
    sha256: hash.digest('hex'),
  };
  yield `${chunk}${JSON.stringify(end)}\n`;
}

/** A backup file that is not one, or not whole: what `creek restore` and `creek backup` say. */
export class BackupFileError extends Error {}

/**
 * Reads and checks the backup file `file`: its header, every state line, its end line, its sha256
 * and its state's digest. Throws a BackupFileError saying what is wrong.
 */
export async function readBackup(file: string): Promise<{
  header: BackupHeader;
  snapshot: BackupSnapshot;
  sha256: string;
  /** The state's StateDigest: what each restored replica's `/status` shows before any write. */
  stateDigest: string;
}> {
  const bad = (why: string): BackupFileError => new BackupFileError(`${file}: ${why}`);
  const hash = createHash('sha256');
  const lines = createInterface({
    input: createReadStream(file, { encoding: 'utf8' }),
    crlfDelay: Infinity,
  });
  let header: BackupHeader | null = null;
  const state: [string, JsonValue][] = [];
  let last: string | null = null;
  try {
    for await (const line of lines) {
      if (last !== null) {
        // The line before this one is not the last: header or state, part of the hashed body.
        hash.update(`${last}\n`);
        if (header === null) header = parseHeader(last, bad);
        else state.push(parseEntry(last, state, header, bad));
      }
      last = line;
    }
  } catch (e) {
    if (e instanceof BackupFileError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw bad(
      code === 'ENOENT' ? 'no such file' : `cannot read it: ${e instanceof Error ? e.message : e}`,
    );
  }
  if (last === null || last === '') throw bad('is empty: not a Creek backup');
  if (header === null) {
    parseHeader(last, bad);
    throw bad('is truncated: it ends after its header, without its state and end line');
  }
  const trailer = parseJson(last);
  const end = TrailerSchema.safeParse(trailer);
  if (!end.success) {
    // The last line, whole, may be a key's: cut right after it.
    const whole = Array.isArray(trailer) ? 1 : 0;
    throw bad(
      `is truncated: it ends after ${state.length + whole} of ${header.keys} keys, without the backup's end line`,
    );
  }
  if (end.data.keys !== header.keys || state.length !== header.keys)
    throw bad(
      `is damaged: it holds ${state.length} keys, its header says ${header.keys} and its end line ${end.data.keys}`,
    );
  const sha256 = hash.digest('hex');
  if (sha256 !== end.data.sha256)
    throw bad(
      `is damaged: its content's sha256 is ${sha256}, its end line says ${end.data.sha256}`,
    );
  const digest = StateDigest.of(state);
  if (digest !== end.data.stateDigest)
    throw bad(
      `is damaged: its state's digest is ${digest}, its end line says ${end.data.stateDigest}`,
    );
  return {
    header,
    sha256,
    stateDigest: digest,
    snapshot: {
      finalized: header.finalized,
      state,
      known: header.known,
      hlc: header.hlc,
      members: header.members,
      ...(header.leftOut === undefined ? {} : { leftOut: header.leftOut }),
    },
  };
}

function parseJson(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return undefined;
  }
}

function parseHeader(line: string, bad: (why: string) => BackupFileError): BackupHeader {
  const json = parseJson(line);
  const format = (json as { format?: unknown } | undefined)?.format;
  if (format !== BACKUP_FORMAT)
    throw bad(`is not a Creek backup (its first line is not a ${BACKUP_FORMAT} header)`);
  const version = (json as { version?: unknown }).version;
  if (version !== BACKUP_VERSION)
    throw bad(
      `is a backup of format version ${String(version)}; this creek reads version ${BACKUP_VERSION}`,
    );
  const parsed = HeaderSchema.safeParse(json);
  if (!parsed.success)
    throw bad(`has a malformed header: ${parsed.error.issues[0]?.path.join('.')} is wrong`);
  return parsed.data;
}

function parseEntry(
  line: string,
  state: readonly [string, JsonValue][],
  header: BackupHeader,
  bad: (why: string) => BackupFileError,
): [string, JsonValue] {
  const json = parseJson(line);
  const n = state.length + 1;
  if (!Array.isArray(json) || json.length !== 2 || typeof json[0] !== 'string')
    throw bad(`is damaged: line ${n + 1} is not a [key, value] pair`);
  if (n > header.keys) throw bad(`is damaged: it holds more keys than its header's ${header.keys}`);
  return [json[0], json[1] as JsonValue];
}
