import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { connect, type CreekClient } from '@creek/client';
import { PEER_PROTOCOL_VERSION, PROTOCOL_VERSION } from '@creek/protocol';
import { freeRun, LocalCluster, type ReplicaStatus } from '../../src/node/local-cluster.js';
import { DB_FILE, SqliteStorage } from '../../src/node/storage.js';
import { creek, CREEK_BIN } from './creek-command.js';

/**
 * Rolling upgrades with real processes. No earlier release exists to upgrade from, so the next one
 * is played by this build claiming it also speaks PEER_PROTOCOL_VERSION + 1
 * (CREEK_TEST_PEER_PROTOCOL): what the test proves is how links and the cluster version move while
 * replicas are restarted one at a time on their data directories under load, not that a next
 * release's messages are understood.
 */
const OLD = PEER_PROTOCOL_VERSION;
const NEXT = PEER_PROTOCOL_VERSION + 1;
const AS_NEXT = { CREEK_TEST_PEER_PROTOCOL: `${OLD}-${NEXT}` };
const WRITERS = 3;

let cluster: LocalCluster | null = null;
const clients: CreekClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await cluster?.stop();
  cluster = null;
});

/** Polls `check` every 100 ms until it holds, or fails naming `what` after `ms`. */
async function until(what: string, check: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * SDK clients, writer c first on replica c, each incrementing its own counter `n<c>` one op at a
 * time (every third strong; a weak one counts once `committed()` resolved) until stopped: a counter
 * that ends above its writer's count applied an op twice, one below lost one.
 */
class Writers {
  readonly acked: number[] = Array.from({ length: WRITERS }, () => 0);
  readonly failures: unknown[] = [];
  private stopped = false;
  private readonly done: Promise<void>;
  constructor(c: LocalCluster) {
    const sessions = Array.from({ length: WRITERS }, (_, w) =>
      connect({ urls: [c.url(w), ...c.urls.filter((u) => u !== c.url(w))], token: c.token }),
    );
    clients.push(...sessions);
    this.done = Promise.all(
      sessions.map(async (client, w) => {
        while (!this.stopped) {
          const n = this.acked[w]!;
          try {
            const op = client.invoke(
              'kv.increment',
              { key: `n${w}` },
              { levels: n % 3 === 2 ? ['strong'] : ['weak'] },
            );
            await op;
            await op.committed();
            this.acked[w] = n + 1;
          } catch (err) {
            this.failures.push(err);
            return;
          }
        }
      }),
    ).then(() => undefined);
  }
  get total(): number {
    return this.acked.reduce((a, b) => a + b, 0);
  }
  /** Resolves once the writers have had `more` more ops acknowledged. */
  async progress(more: number): Promise<void> {
    const target = this.total + more;
    await until(`${more} more ops acknowledged`, async () => {
      if (this.failures.length > 0) throw this.failures[0];
      return this.total >= target;
    });
  }
  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }
}

/** Each running replica's /status. */
async function statuses(c: LocalCluster, ids: readonly number[]): Promise<ReplicaStatus[]> {
  const all = await Promise.all(ids.map((i) => c.status(i)));
  return all.filter((s): s is ReplicaStatus => s !== null);
}

/**
 * Waits until replica i's links to `peers` are up at the version each pair speaks (the newer one
 * only between two upgraded replicas) and every replica in `running` reports `cluster` as the
 * cluster version.
 */
async function linksSettle(
  c: LocalCluster,
  running: readonly number[],
  upgraded: ReadonlySet<number>,
  cluster: number,
  versions = { old: OLD, next: NEXT },
): Promise<void> {
  const expected = (i: number, j: number) =>
    upgraded.has(i) && upgraded.has(j) ? versions.next : versions.old;
  await until(
    `links at their versions, cluster version ${cluster} (upgraded: ${[...upgraded].join(',')})`,
    async () => {
      const all = await statuses(c, running);
      return (
        all.length === running.length &&
        all.every(
          (s) =>
            s.protocol.cluster === cluster &&
            running.every(
              (j) => j === s.id || s.protocol.links[String(j)]?.version === expected(s.id, j),
            ),
        )
      );
    },
  );
}

/**
 * Restarts replicas 0, 1 and 2 one at a time with `restart` under the writers' load, each time
 * waiting until the links run at the versions each pair speaks (the cluster version rises after
 * the last) and the writers have 20 more ops acknowledged.
 */
async function upgradeOneAtATime(
  c: LocalCluster,
  writers: Writers,
  restart: (i: number) => void,
  versions = { old: OLD, next: NEXT },
): Promise<void> {
  const upgraded = new Set<number>();
  await linksSettle(c, [0, 1, 2], upgraded, versions.old, versions);
  for (const i of [0, 1, 2]) {
    expect(await c.terminate(i)).toBe(0);
    restart(i);
    upgraded.add(i);
    const cluster = upgraded.size === 3 ? versions.next : versions.old;
    await linksSettle(c, [0, 1, 2], upgraded, cluster, versions);
    await writers.progress(20);
  }
}

/** The writers stopped with nothing failed, every counter exact, every replica's digest equal. */
async function nothingLostAndConverged(c: LocalCluster, writers: Writers): Promise<void> {
  await writers.stop();
  expect(writers.failures).toEqual([]);
  await countersExact(c, writers);
  const converged = await c.converged();
  expect(new Set(converged.map((s) => s.digest)).size).toBe(1);
}

/** Replica 2, restarted with `restart`, is refused by replica 0 (`what` says why, for a timeout). */
async function refusedOnRestart(c: LocalCluster, restart: () => void, what: string): Promise<void> {
  expect(await c.terminate(2)).toBe(0);
  restart();
  await until(what, async () => {
    const s = await c.status(0);
    return s !== null && s.protocol.refused > 0;
  });
}

/** Every writer's counter, read strongly, equals what it had acknowledged. */
async function countersExact(c: LocalCluster, w: Writers): Promise<void> {
  const reader = connect({ urls: c.urls, token: c.token });
  clients.push(reader);
  for (let k = 0; k < WRITERS; k++)
    expect(await reader.invokeStrong('kv.get', { key: `n${k}` })).toBe(w.acked[k]);
}

describe('a rolling upgrade to the next peer protocol version', () => {
  it('upgrades replicas one at a time under load: nothing lost, nothing applied twice, the cluster version rises after the last', async () => {
    cluster = await LocalCluster.start({ replicas: 3 });
    const c = cluster;
    const writers = new Writers(c);
    await writers.progress(20);
    await upgradeOneAtATime(c, writers, (i) => c.startReplica(i, AS_NEXT));
    await nothingLostAndConverged(c, writers);
    expect(await c.metrics(0)).toMatch(
      new RegExp(`^creek_peer_protocol_cluster_version\\{replica="0"\\} ${NEXT}$`, 'm'),
    );
    expect(await c.metrics(0)).toMatch(
      new RegExp(`^creek_peer_link_protocol_version\\{peer="1",replica="0"\\} ${NEXT}$`, 'm'),
    );

    // Going back: replica 2 restarted on the older release is refused by the others, which
    // already run the newer version together, and the cluster goes on without it.
    await refusedOnRestart(c, () => c.startReplica(2), 'replica 0 refused the older replica 2');
    const s0 = await c.status(0);
    expect(s0?.protocol.cluster).toBe(NEXT);
    expect(s0?.protocol.links['2']?.version).toBeNull();
    const reader = connect({ urls: [c.url(0), c.url(1)], token: c.token });
    clients.push(reader);
    await reader.invokeStrong('kv.increment', { key: 'after' });
  });

  it('an upgrade interrupted half-way (one replica upgraded, then killed) leaves the others committing, and the replica can come back on the older release', async () => {
    cluster = await LocalCluster.start({ replicas: 3 });
    const c = cluster;
    const writers = new Writers(c);
    await writers.progress(10);
    expect(await c.terminate(0)).toBe(0);
    c.startReplica(0, AS_NEXT);
    await linksSettle(c, [0, 1, 2], new Set([0]), OLD);
    await c.killed(0);
    // The writer that started on replica 0 moves on; the others keep committing.
    await writers.progress(30);
    for (const s of await statuses(c, [1, 2])) expect(s.protocol.cluster).toBe(OLD);
    // Rolled back: the older release takes its directory again and links at the older version.
    c.startReplica(0);
    await linksSettle(c, [0, 1, 2], new Set(), OLD);
    await writers.progress(10);
    await nothingLostAndConverged(c, writers);
  });
});

/** The first frame a replica answers `hello` with, on a connection of its own. */
async function firstAnswer(url: string, hello: unknown): Promise<Record<string, unknown>> {
  const ws = new WebSocket(url);
  try {
    return await new Promise((resolve, reject) => {
      ws.once('error', reject);
      ws.once('open', () => ws.send(JSON.stringify(hello)));
      ws.once('message', (data) => resolve(JSON.parse(String(data)) as Record<string, unknown>));
    });
  } finally {
    ws.close();
  }
}

/**
 * The previous release, as its npm tarballs (test/fixtures/previous-release, packed from its commit
 * by scripts/pack-previous-release.sh; SOURCE.md there names it), unpacked next to this checkout so
 * that its third-party dependencies are this checkout's (the lockfile is the same; the script
 * checks it): its `creek` command.
 */
function previousRelease(): { bin: string; peerNewest: number } {
  const fixtures = fileURLToPath(new URL('../fixtures/previous-release/', import.meta.url));
  const root = fileURLToPath(new URL('../.previous-release/node_modules/@creek/', import.meta.url));
  rmSync(root, { recursive: true, force: true });
  const tarballs = readdirSync(fixtures).filter((f) => f.endsWith('.tgz'));
  expect(tarballs.map((t) => t.replace(/-[\d.]+\.tgz$/, '')).sort()).toEqual([
    'creek-app',
    'creek-client',
    'creek-protocol',
    'creek-replica',
    'creek-server',
  ]);
  for (const t of tarballs) {
    const into = join(root, t.replace(/^creek-/, '').replace(/-[\d.]+\.tgz$/, ''));
    mkdirSync(into, { recursive: true });
    execFileSync('tar', ['-xzf', join(fixtures, t), '-C', into, '--strip-components=1']);
  }
  const source = readFileSync(join(fixtures, 'SOURCE.md'), 'utf8');
  const newest = /peer protocol versions? (\d+)/.exec(source);
  if (newest === null) throw new Error('SOURCE.md does not say the peer protocol version');
  return { bin: join(root, 'server', 'bin', 'creek.js'), peerNewest: Number(newest[1]) };
}

describe('an upgrade from the previous release', () => {
  it('runs a cluster on the previous release’s packages and upgrades it replica by replica to this build under load: no op fails or is applied twice, the replicas converge, and the cluster version rises after the last', async () => {
    const previous = previousRelease();
    const versions = { old: previous.peerNewest, next: PEER_PROTOCOL_VERSION };
    cluster = await LocalCluster.start({ replicas: 3, bin: previous.bin });
    const c = cluster;
    const writers = new Writers(c);
    await writers.progress(20);
    await upgradeOneAtATime(c, writers, (i) => c.startReplica(i, {}, CREEK_BIN), versions);
    await nothingLostAndConverged(c, writers);
    // The previous release, once every member runs this one, is refused.
    await refusedOnRestart(
      c,
      () => c.startReplica(2, {}, previous.bin),
      'replica 0 refused the previous release',
    );
  });
});

describe('a rolling upgrade to the next client protocol version', () => {
  // The next release's replicas speak this client's version and the next one.
  const CLIENT_NEXT = PROTOCOL_VERSION + 1;
  const SPEAKS_NEXT = { CREEK_TEST_CLIENT_PROTOCOL: `${PROTOCOL_VERSION}-${CLIENT_NEXT}` };

  it('keeps this release’s SDK clients served while replicas are upgraded one at a time, and runs each connection at the newest version both ends speak', async () => {
    cluster = await LocalCluster.start({ replicas: 3 });
    const c = cluster;
    const writers = new Writers(c);
    await writers.progress(10);
    const hello = (newest?: number) => ({
      t: 'hello',
      version: PROTOCOL_VERSION,
      token: c.token,
      ...(newest === undefined ? {} : { newest }),
    });
    for (const i of [0, 1, 2]) {
      expect(await c.terminate(i)).toBe(0);
      c.startReplica(i, SPEAKS_NEXT);
      await until(`replica ${i} back`, async () => (await c.status(i)) !== null);
      await writers.progress(10);
      // The next release's client on an upgraded replica runs at the next version; this release's
      // client, and any client on a replica not upgraded yet, at this one.
      expect(await firstAnswer(c.url(i), hello(CLIENT_NEXT))).toMatchObject({
        t: 'welcome',
        version: CLIENT_NEXT,
      });
      expect(await firstAnswer(c.url(i), hello())).toMatchObject({
        t: 'welcome',
        version: PROTOCOL_VERSION,
      });
      if (i < 2)
        expect(await firstAnswer(c.url(2), hello(CLIENT_NEXT))).toMatchObject({
          t: 'welcome',
          version: PROTOCOL_VERSION,
        });
    }
    await writers.stop();
    expect(writers.failures).toEqual([]);
    await countersExact(c, writers);
  });

  it('refuses clients and replicas whose versions do not overlap, saying which side to upgrade, and an SDK client moves to a replica that speaks its version', async () => {
    // Replica 0 plays a release two steps ahead, which no longer speaks this client's version.
    cluster = await LocalCluster.start({ replicas: 3 });
    const c = cluster;
    expect(await c.terminate(0)).toBe(0);
    c.startReplica(0, { CREEK_TEST_CLIENT_PROTOCOL: `${CLIENT_NEXT}-${CLIENT_NEXT + 1}` });
    const reader = connect({ urls: [c.url(1)], token: c.token });
    clients.push(reader);
    await reader.invokeStrong('kv.put', { key: 'k', value: 1 });
    await until('replica 0 back', async () => (await c.status(0)) !== null);

    const refused = await firstAnswer(c.url(0), {
      t: 'hello',
      version: PROTOCOL_VERSION,
      token: c.token,
    });
    expect(refused).toMatchObject({ t: 'error', code: 'version' });
    expect(refused.message).toMatch(
      new RegExp(
        `this replica speaks client protocol ${CLIENT_NEXT} to ${CLIENT_NEXT + 1}, the client ${PROTOCOL_VERSION}: upgrade the client`,
      ),
    );
    // A client from the future, on a replica of this release.
    const ahead = await firstAnswer(c.url(1), {
      t: 'hello',
      version: PROTOCOL_VERSION + 5,
      newest: PROTOCOL_VERSION + 6,
      token: c.token,
    });
    expect(ahead).toMatchObject({ t: 'error', code: 'version' });
    expect(ahead.message).toMatch(/upgrade the replica/);
    // Malformed ranges and versions: refused, the replica serves on.
    for (const bad of [
      { version: PROTOCOL_VERSION, newest: 0 },
      { version: PROTOCOL_VERSION, newest: 70_000 },
      { version: PROTOCOL_VERSION, newest: 1.5 },
      { version: PROTOCOL_VERSION, newest: '2' },
      { version: 'one' },
    ])
      expect(await firstAnswer(c.url(1), { t: 'hello', token: c.token, ...bad })).toMatchObject({
        t: 'error',
        code: 'bad-frame',
      });
    expect(
      await firstAnswer(c.url(1), { t: 'hello', token: c.token, version: 2, newest: 1 }),
    ).toMatchObject({ t: 'error', code: 'version' });

    // This release's SDK given replica 0 first moves on to replica 1, which speaks its version.
    const mover = connect({ urls: [c.url(0), c.url(1)], token: c.token, discover: false });
    clients.push(mover);
    expect(await mover.invokeStrong('kv.get', { key: 'k' })).toBe(1);
    // Given replica 0 alone, its ops fail, and the error says why.
    const stuck = connect({
      urls: [c.url(0)],
      token: c.token,
      discover: false,
      connectTimeoutMs: 1_500,
    });
    clients.push(stuck);
    await expect(stuck.invokeStrong('kv.get', { key: 'k' })).rejects.toThrow(
      /client protocol .*upgrade the client/,
    );
  });
});

describe('a downgrade of the storage format', () => {
  const dir = mkdtempSync(join(tmpdir(), 'creek-downgrade-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('creek start refuses a data directory a newer storage format wrote, saying so, with status 1', async () => {
    const data = join(dir, 'data');
    SqliteStorage.open(data, { replicaId: 0 }).close();
    const db = new Database(join(data, DB_FILE));
    db.prepare("UPDATE meta SET value = '99' WHERE key = 'version'").run();
    db.close();
    const secret = join(dir, 'cluster.secret');
    writeFileSync(secret, 'a-secret-of-sixteen-chars\n', { mode: 0o600 });
    const port = await freeRun(1, '127.0.0.1');
    const r = await creek(
      'start',
      '--id',
      '0',
      '--listen',
      `127.0.0.1:${port}`,
      '--peers',
      `0=ws://127.0.0.1:${port}`,
      '--data',
      data,
      '--secret-file',
      secret,
    );
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /storage format version 99, written by a newer release of creek; this build reads versions 1 to \d+\. A data directory never goes back to an older release/,
    );
  });
});
