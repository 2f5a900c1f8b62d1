import type { Entry, ReadRecord, Version } from './entry.js';
import type { JsonValue } from '@creek/app';
import type { SnapshotReader } from './types.js';
import type { VersionStore } from './version-store.js';

/**
 * The snapshot handed to an execution: reads at the entry's position in the order, and records what
 * each read saw so the execution can later be validated instead of re-run (§4.4, "rollbacks only if
 * necessary").
 */
export class RecordingSnapshot implements SnapshotReader {
  readonly reads: ReadRecord[] = [];

  constructor(
    private readonly store: VersionStore,
    private readonly reader: Entry,
  ) {}

  get(key: string): JsonValue | undefined {
    // Ops read few keys: a linear look-up beats a map per execution.
    const reads = this.reads;
    for (let i = 0; i < reads.length; i++) {
      const r = reads[i]!;
      if (r.kind === 'key' && r.key === key)
        return r.version === null ? undefined : r.version.value;
    }
    const version = this.store.visible(key, this.reader);
    reads.push({ kind: 'key', key, version });
    return version === null ? undefined : version.value;
  }

  scan(prefix: string): ReadonlyArray<readonly [string, JsonValue]> {
    const versions: Version[] = this.store.scan(prefix, this.reader);
    this.reads.push({ kind: 'scan', prefix, versions });
    return versions.map((v) => [v.key, v.value as JsonValue] as const);
  }
}
