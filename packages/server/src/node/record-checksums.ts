/**
 * The checksums of the storage's rows (storage.ts, format version 5): each row of `records` holds
 * a CRC-32 of its layer, kind and body, continued from the sum of the row before it, and the first
 * row's from the checkpoint's (or from 0 without one), so that the rows make a chain:
 *
 *   checkpoint.sum = crc32("checkpoint\n" + body)
 *   records.sum    = crc32(layer + "\n" + kind + "\n" + body, sum of the row before, or the
 *                    checkpoint's, or 0)
 *
 * A bit flipped in a row fails its own sum; a row that reads back as an older version of itself
 * (a stale page), or a checkpoint that does, fails the next row's. The CRC-32 is zlib's (node:zlib
 * crc32), the one the simulator's disk keeps of its records (sim/disk.ts).
 */
import { crc32 } from 'node:zlib';

/** The sum of a `records` row that follows a row (or checkpoint) whose sum is `prev`. */
export function rowSum(layer: string, kind: string, body: string, prev: number): number {
  return crc32(`${layer}\n${kind}\n${body}`, prev);
}

/** The sum of the checkpoint row's body. */
export function checkpointSum(body: string): number {
  return crc32(`checkpoint\n${body}`);
}

/**
 * What `load` found wrong with a data directory's rows (SqliteStorage.load): the replica must not
 * use them, and rebuilds itself from its peers (ReplicaServer.start).
 */
export class StorageDamage extends Error {
  constructor(
    /** The database file. */
    readonly file: string,
    /** What is damaged, in words: `record 12 (core/req) does not match its checksum: …`. */
    readonly what: string,
  ) {
    super(`${file}: ${what}`);
    this.name = 'StorageDamage';
  }

  /** A row whose checksum does not match (`row`: `record 12 (core/req)`, `the checkpoint`). */
  static checksum(file: string, row: string): StorageDamage {
    return new StorageDamage(
      file,
      `${row} does not match its checksum: it, or the row before it, is not what this replica wrote (a flipped bit, a torn page, an older version read back)`,
    );
  }
}
