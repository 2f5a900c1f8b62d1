import type { Entry, ReadRecord, Version } from './entry.js';
import type { JsonValue } from './json.js';
import type { SnapshotReader } from './types.js';
import type { VersionStore } from './version-store.js';

/**
 * The snapshot handed to an execution: reads at the entry's position in the order, and records what
 * each read saw so the execution can later be validated instead of re-run (§4.4, "rollbacks only if
 * necessary").
 */
export class RecordingSnapshot implements SnapshotReader {
  readonly reads: ReadRecord[] = [];
  private readonly seen = new Map<string, JsonValue | undefined>();

  constructor(
    private readonly store: VersionStore,
    private readonly reader: Entry,
  ) {}

  get(key: string): JsonValue | undefined {
    if (this.seen.has(key)) return this.seen.get(key);
    const version = this.store.visible(key, this.reader);
    this.reads.push({ kind: 'key', key, version });
    const value = version === null ? undefined : version.value;
    this.seen.set(key, value);
    return value;
  }

  scan(prefix: string): ReadonlyArray<readonly [string, JsonValue]> {
    const versions: Version[] = this.store.scan(prefix, this.reader);
    this.reads.push({ kind: 'scan', prefix, versions });
    return versions.map((v) => [v.key, v.value as JsonValue] as const);
  }
}
