/**
 * Child process for the kill test in storage.e2e.test.ts:
 *
 *   node --import tsx storage-writer.ts <dir> <replicaId> <batchSize>
 *
 * Opens the storage, continues the record sequence from what is already there, and appends batches
 * of `batchSize` records forever, printing the total record count after each append returns. The
 * parent SIGKILLs it at an arbitrary moment.
 */
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { DottedVersionVector } from '@creek/replica/core/dvv.js';
import { toFrozenJson } from '@creek/app';
import type { HostRecord } from '@creek/replica/host/records.js';
import { SqliteStorage } from '../../src/node/storage.js';

/** The `n`th record (from 0) the writer appends: a mix of every kind, derived from `n` alone. */
export function writerRecord(n: number): HostRecord {
  const id = { replica: n % 5, eventNo: n + 1 };
  switch (n % 4) {
    case 0:
      return {
        layer: 'core',
        record: {
          kind: 'req',
          req: {
            ts: 1_700_000_000_000_000 + n,
            id,
            op: 'put',
            args: toFrozenJson({ key: `k${n}`, value: [n, { pad: 'x'.repeat(n % 64) }] }),
            strong: n % 8 === 0,
            causalCtx: n % 8 === 0 ? DottedVersionVector.fromPrefixes([[1, n]]) : null,
          },
        },
      };
    case 1:
      return { layer: 'core', record: { kind: 'commit', ids: [id, { replica: 9, eventNo: n }] } };
    case 2:
      return {
        layer: 'cab',
        record: { kind: 'accept', instance: n, ballot: 257, value: [{ id, prevStrong: n }] },
      };
    default:
      return { layer: 'cab', record: { kind: 'promise', ballot: n } };
  }
}

function main(): void {
  const [dir, replicaId, batchSize] = process.argv.slice(2);
  if (dir === undefined || replicaId === undefined || batchSize === undefined)
    throw new Error('usage: storage-writer.ts <dir> <replicaId> <batchSize>');
  const size = Number(batchSize);
  const storage = SqliteStorage.open(dir, { replicaId: Number(replicaId) });
  let total = storage.load().length;
  for (;;) {
    const batch: HostRecord[] = [];
    for (let i = 0; i < size; i++) batch.push(writerRecord(total + i));
    storage.append(batch);
    total += size;
    // Stdout to a pipe is synchronous on POSIX: the parent sees only counts already committed.
    process.stdout.write(`${total}\n`);
  }
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(realpathSync(entry)).href) main();
