import Database from 'better-sqlite3';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StateDigest } from '@creek/replica/core/state-digest.js';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { DB_FILE } from '../../src/node/storage.js';
import { RawClient, within } from './cluster-harness.js';

/**
 * A replica whose data directory was damaged while it was down (a byte of a row changed on disk)
 * finds it by the row's checksum when it starts, uses none of it, and rebuilds itself from its
 * peers, with three real replica processes.
 */
describe('a replica whose data directory is damaged', () => {
  let cluster: LocalCluster | null = null;
  afterEach(async () => {
    await cluster?.stop(1_000);
    cluster = null;
  });

  it('refuses the damaged rows, says so in its log and /status, and repairs itself from its peers', async () => {
    const exits: { replica: number; code: number | null }[] = [];
    const logs: string[] = [];
    cluster = await LocalCluster.start({
      replicas: 3,
      logLevel: 'error',
      onExit: (replica, code) => exits.push({ replica, code }),
      onLog: (replica, line) => {
        if (replica === 2) logs.push(line);
      },
    });
    await cluster.waitForLeader();
    const c2 = await RawClient.connect(cluster.url(2), cluster.token);
    const ops = Array.from({ length: 6 }, (_, i) =>
      c2.invoke('kv.increment', { key: `k${i % 3}` }, i % 2 === 0 ? 'strong' : 'weak'),
    );
    await within(Promise.all(ops.map((o) => o.done)), 20_000, 'ops answered at replica 2');
    c2.close();
    await cluster.converged();
    expect((await cluster.status(2))!.identity).toEqual({ origin: 2, incarnation: 0 });

    // Down, one byte of one of its Paxos rows changes on disk: a digit of a ballot or instance.
    await cluster.killed(2);
    const dir = join(cluster.dir, 'replica-2');
    const db = new Database(join(dir, DB_FILE));
    const rows = db
      .prepare("SELECT seq, layer, kind, body FROM records WHERE layer = 'cab' ORDER BY seq")
      .all() as { seq: number; layer: string; kind: string; body: string }[];
    expect(rows.length).toBeGreaterThan(0);
    const row = rows[0]!;
    const digit = row.body.search(/\d/);
    const flipped =
      row.body.slice(0, digit) +
      String.fromCharCode(row.body.charCodeAt(digit) ^ 1) +
      row.body.slice(digit + 1);
    db.prepare('UPDATE records SET body = ? WHERE seq = ?').run(flipped, row.seq);
    db.close();

    cluster.startReplica(2);
    await cluster.until(
      async () => (await cluster!.status(2))?.storage.repaired !== undefined,
      20_000,
      'replica 2 up, reporting its repair',
    );
    const repaired = (await cluster.status(2))!.storage.repaired!;
    expect(repaired.reason).toBe(
      `record ${row.seq} (${row.layer}/${row.kind}) does not match its checksum: it, or the row before it, is not what this replica wrote (a flipped bit, a torn page, an older version read back)`,
    );
    // The damaged database is kept for inspection, beside the new one.
    expect(repaired.keptAs.startsWith(join(dir, `${DB_FILE}.damaged-`))).toBe(true);
    expect(existsSync(repaired.keptAs)).toBe(true);
    expect(readdirSync(dir)).toContain(DB_FILE);
    const line = logs
      .map((l) => JSON.parse(l) as { msg?: string; damage?: string; keptAs?: string })
      .find((l) => l.msg?.startsWith('the data directory is damaged') === true);
    expect(line).toMatchObject({ damage: repaired.reason, keptAs: repaired.keptAs });

    // It learns everything from its peers, under a new identity (its old ops are theirs to keep),
    // and serves again.
    await cluster.until(
      async () => (await cluster!.status(2))?.learning === false,
      20_000,
      'replica 2 done learning from its peers',
    );
    expect((await cluster.status(2))!.identity).toEqual({ origin: 258, incarnation: 1 });
    const again = await RawClient.connect(cluster.url(2), cluster.token);
    const op = again.invoke('kv.increment', { key: 'k0' }, 'strong');
    await within(op.done, 20_000, 'a strong op at the repaired replica 2');
    expect(op.views.frames.at(-1)).toMatchObject({ t: expect.stringMatching(/^(view|confirm)$/) });
    again.close();
    const s = await cluster.converged();
    expect(s[2]!.digest).toBe(s[0]!.digest);
    expect(s[0]!.digest).toBe(StateDigest.of(Object.entries({ k0: 3, k1: 2, k2: 2 })));
    // Only the SIGKILL ended a replica: it did not halt on its damaged disk.
    expect(exits).toEqual([{ replica: 2, code: null }]);
  });
});
