import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStorage } from '../../src/node/storage.js';
import { HostCluster } from './host-cluster.js';

/**
 * A replica restarted from what the SQLite storage gives back, not from the records as the host
 * wrote them: the storage packs records into fewer rows (consecutive Reqs, consecutive commits),
 * and a restart must see every record as it was written. The host takes the last id of each
 * commit record for a strong op delivered; a storage that joined consecutive commits into one
 * lost those deliveries, and the restarted replica stopped delivering for good (found in review).
 */
describe('a replica restarted through SqliteStorage', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('gets back every record as written, and goes on delivering strong ops', () => {
    const c = new HostCluster(3, 7);
    c.settle();
    for (let k = 0; k < 3; k++) {
      c.invoke(0, 'kv.put', { key: 'a', value: k }, true);
      c.invoke(1, 'kv.put', { key: 'b', value: k }, true);
      c.invoke(2, 'kv.put', { key: 'c', value: k }, true);
    }
    c.settle();
    const node = c.nodes[2]!;
    const dir = mkdtempSync(path.join(tmpdir(), 'creek-storage-restart-'));
    dirs.push(dir);
    const storage = SqliteStorage.open(dir, { replicaId: 2 });
    storage.append(node.disk);
    const loaded = storage.load();
    storage.close();
    // The run wrote consecutive commits, so the storage packed some of them in one row.
    const kinds = node.disk.map((r) => (r.layer === 'core' ? r.record.kind : r.layer));
    expect(kinds.join(' ')).toMatch(/commit commit/);
    expect(loaded).toEqual(node.disk);

    c.crash(2);
    node.disk = loaded;
    c.restart(2);
    for (let k = 0; k < 3; k++) {
      c.invoke(0, 'kv.put', { key: 'a', value: 10 + k }, true);
      c.invoke(2, 'kv.put', { key: 'c', value: 10 + k }, true);
    }
    c.settle();
    expect(c.halts).toEqual([]);
    expect(c.host(2).inspect().replica.stateJson()).toEqual(
      c.host(0).inspect().replica.stateJson(),
    );
  });
});
