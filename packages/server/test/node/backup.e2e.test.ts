import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson, defineApp, type JsonValue } from '@creek/app';
import { connect, type CreekClient } from '@creek/client';
import { RESERVED_PREFIX } from '@creek/replica/core/session-dedupe.js';
import { readBackup } from '../../src/node/backup-file.js';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { creek } from './creek-command.js';
import { ReferenceInterpreter } from '../../src/sim/reference-interpreter.js';

/**
 * `creek backup` and `creek restore` round trip, on real processes: a cluster under load is backed
 * up (and again during a leader change), keeps writing, and a new 3-replica cluster restored from
 * the backup holds exactly the state at the backup's committed position: what the reference
 * interpreter computes by replaying that prefix, and nothing written after. Then the restored
 * cluster takes writes of its own. Files and directories that must be refused are, with what is
 * wrong and exit 1 (exit 2 for a mistake in the call).
 *
 * KEYS keys are written before the backup: 5,000 in CI (2 loaded cores); CREEK_BACKUP_KEYS=50000
 * runs the full-size round trip by hand.
 */
const KEYS = Number(process.env.CREEK_BACKUP_KEYS ?? 5_000);
const WRITERS = 6;
const DEADLINE_MS = 300_000;

let old: LocalCluster;
let restored: LocalCluster | null = null;
let scratch: string;
let tokenFile: string;

function backup(i: number, out: string) {
  return creek('backup', '--url', old.httpUrl(i), '--admin-token-file', tokenFile, '--out', out);
}

/**
 * Writers, each a client session writing `w<c>/<n>` = n for n = 0, 1, … one op at a time (every
 * tenth strong), until stopped: each writer's ops are ordered in the order it wrote them, so a
 * committed prefix holds, of each writer, its keys below some n.
 */
class Writers {
  readonly written: number[] = Array.from({ length: WRITERS }, () => 0);
  private stopped = false;
  private readonly done: Promise<void>;
  constructor(readonly clients: readonly CreekClient[]) {
    this.done = Promise.all(
      clients.map(async (client, c) => {
        while (!this.stopped) {
          const n = this.written[c]!;
          const args = { key: `w${c}/${n}`, value: n };
          await (n % 10 === 9
            ? client.invokeStrong('kv.put', args)
            : client.invokeWeak('kv.put', args));
          this.written[c] = n + 1;
        }
      }),
    ).then(() => undefined);
  }
  get total(): number {
    return this.written.reduce((a, b) => a + b, 0);
  }
  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }
}

/**
 * The state the backup holds, checked against the reference interpreter: each writer's keys in it
 * are those below some n, and replaying those writes, writer by writer, gives exactly its
 * non-reserved state (the session records under RESERVED_PREFIX are the sessions' own; the
 * replicas' digest covers them, below). Returns how many writes the prefix holds.
 */
function checkAgainstReference(state: ReadonlyArray<readonly [string, JsonValue]>): number {
  const own = state.filter(([k]) => !k.startsWith(RESERVED_PREFIX));
  const upTo = Array.from(
    { length: WRITERS },
    (_, c) => own.filter(([k]) => k.startsWith(`w${c}/`)).length,
  );
  const reference = new ReferenceInterpreter(defineApp({}));
  for (let c = 0; c < WRITERS; c++)
    for (let n = 0; n < upTo[c]!; n++)
      reference.apply({ op: 'kv.put', args: { key: `w${c}/${n}`, value: n }, ts: 0, id: null });
  const sorted = [...own].sort((a, b) => (a[0] < b[0] ? -1 : 1));
  expect(canonicalJson(Object.fromEntries(sorted))).toBe(reference.digest());
  return upTo.reduce((a, b) => a + b, 0);
}

/** A replica of the old cluster that runs (the first test kills its leader). */
function live(): number {
  return [0, 1, 2].find((i) => old.isRunning(i))!;
}

beforeAll(async () => {
  old = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
  scratch = mkdtempSync(join(tmpdir(), 'creek-backup-'));
  tokenFile = join(old.dir, 'admin.token');
});

afterAll(async () => {
  await restored?.stop(1_000);
  await old.stop(1_000);
  rmSync(scratch, { recursive: true, force: true });
});

describe('creek backup and creek restore', () => {
  it(
    'restore a new cluster holding exactly the state at the backup position, under load and across a leader change',
    async () => {
      await old.waitForLeader();
      const leader = (await old.status(0))!.leader!;
      const followers = [0, 1, 2].filter((i) => i !== leader);
      // The writers use the followers only: the leader is killed below, and a weak op only it
      // had acknowledged would be missing from a later backup until it came back.
      const clients = Array.from({ length: WRITERS }, (_, c) =>
        connect({ urls: [old.url(followers[c % 2]!)], token: old.token }),
      );
      const writers = new Writers(clients);
      await old.until(async () => writers.total >= KEYS, DEADLINE_MS, `${KEYS} keys written`);

      const file = join(scratch, 'a.creek-backup');
      const taken = await backup(followers[0]!, file);
      expect(taken.err).toBe('');
      expect(taken.code).toBe(0);
      expect(taken.out).toMatch(
        /^backed up replica \d+ of cluster local-\w+ at committed position \d+: \d+ keys/,
      );
      const writtenAtBackup = writers.total;

      // During a leader change: the leader killed, a follower backed up while they elect.
      old.kill(leader);
      const during = join(scratch, 'b.creek-backup');
      const second = await backup(followers[1]!, during);
      expect(second.err).toBe('');
      await old.until(
        async () => {
          const s = await old.status(followers[0]!);
          return s !== null && s.leader !== null && s.leader !== leader;
        },
        DEADLINE_MS,
        'a new leader',
      );
      // Keep writing after both backups.
      const after = writers.total;
      await old.until(
        async () => writers.total >= after + 500,
        DEADLINE_MS,
        'writes after the backups',
      );
      await writers.stop();
      await Promise.all(clients.map((c) => c.close()));

      const a = await readBackup(file);
      const b = await readBackup(during);
      expect(a.header.keys).toBeGreaterThan(0);
      const inA = checkAgainstReference(a.snapshot.state);
      const inB = checkAgainstReference(b.snapshot.state);
      expect(inA).toBeGreaterThan(0);
      expect(inA).toBeLessThanOrEqual(writtenAtBackup);
      expect(inA).toBeLessThanOrEqual(a.header.finalized);
      expect(b.header.finalized).toBeGreaterThanOrEqual(a.header.finalized);
      expect(inB).toBeGreaterThanOrEqual(inA);

      // A new cluster restored from the first backup.
      const dir = join(scratch, 'restored');
      for (const i of [0, 1, 2]) {
        const r = await creek(
          'restore',
          '--from',
          file,
          '--data',
          join(dir, `replica-${i}`),
          '--id',
          String(i),
          '--cluster-id',
          'restored',
        );
        expect(r.err).toBe('');
        expect(r.code).toBe(0);
        expect(r.out).toContain(`restored replica ${i} of the new cluster restored`);
      }
      restored = await LocalCluster.start({
        replicas: 3,
        dataDir: dir,
        clusterId: 'restored',
        logLevel: 'error',
      });
      // Idle, every replica holds exactly the backup's state (the digest covers every key, the
      // sessions' records included), at or past its position (an election may commit a no-op).
      const statuses = await restored.converged(DEADLINE_MS);
      for (const s of statuses) {
        expect(s.digest).toBe(a.stateDigest);
        expect(s.committed).toBeGreaterThanOrEqual(a.header.finalized);
      }
      const client = connect({ urls: restored.urls, token: restored.token });
      try {
        // A key of the backup's prefix is there; the first one written after it is not.
        const w0 = a.snapshot.state.filter(([k]) => k.startsWith('w0/')).length;
        expect(await client.invokeStrong('kv.get', { key: `w0/${w0 - 1}` })).toBe(w0 - 1);
        expect(await client.invokeStrong('kv.get', { key: `w0/${w0}` })).toBeNull();
        // It takes writes of its own, weak and strong, and its replicas agree on them.
        await client.invokeWeak('kv.put', { key: 'after-restore', value: 1 });
        await client.invokeStrong('kv.put', { key: 'after-restore-2', value: 2 });
        expect(await client.invokeStrong('kv.get', { key: 'after-restore' })).toBe(1);
      } finally {
        await client.close();
      }
      const later = await restored.converged(DEADLINE_MS);
      expect(later[0]!.digest).not.toBe(a.stateDigest);
      // Its replicas numbered their ops under identities above the old cluster's.
      for (const s of later) expect(s.identity).not.toBeNull();
      await restored.stop(1_000);
      restored = null;
    },
    DEADLINE_MS * 3,
  );

  it('refuses to restore what is not a whole backup of another cluster, and into a used directory', async () => {
    const file = join(scratch, 'c.creek-backup');
    expect((await backup(live(), file)).code).toBe(0);
    const header = (await readBackup(file)).header;
    const text = readFileSync(file, 'utf8');
    const restoreInto = (from: string, data: string, cluster = 'new-one') =>
      creek('restore', '--from', from, '--data', data, '--id', '0', '--cluster-id', cluster);
    const cut = join(scratch, 'cut');
    writeFileSync(cut, text.slice(0, Math.floor(text.length / 2)));
    const mangled = join(scratch, 'mangled');
    // One value changed: w0/0 = 7, a valid line, so only the sha256 tells.
    expect(text).toContain('\n["w0/0",0]\n');
    writeFileSync(mangled, text.replace('\n["w0/0",0]\n', '\n["w0/0",7]\n'));
    const cases: [string, string, string, RegExp][] = [
      [cut, join(scratch, 'd1'), 'new-one', /is truncated: it ends after \d+ of \d+ keys/],
      [mangled, join(scratch, 'd2'), 'new-one', /is damaged: its content's sha256 is/],
      [join(scratch, 'none'), join(scratch, 'd3'), 'new-one', /no such file/],
      [tokenFile, join(scratch, 'd4'), 'new-one', /is not a Creek backup/],
      [
        file,
        join(scratch, 'd5'),
        header.cluster!,
        /is the backed-up cluster's: a restore makes a new cluster/,
      ],
    ];
    for (const [from, data, cluster, why] of cases) {
      const r = await restoreInto(from, data, cluster);
      expect(r.err, from).toMatch(why);
      expect(r.err).toMatch(/^creek restore: /);
      expect(r.code).toBe(cluster === header.cluster ? 2 : 1);
    }
    // A directory that holds anything is never written over.
    const used = join(scratch, 'used');
    mkdirSync(used);
    writeFileSync(join(used, 'creek.db'), 'a replica of some cluster');
    const r = await restoreInto(file, used);
    expect(r.err).toMatch(/--data .* is not empty \(it holds creek\.db\)/);
    expect(readFileSync(join(used, 'creek.db'), 'utf8')).toBe('a replica of some cluster');
    // Missing and malformed settings.
    expect((await creek('restore', '--from', file)).err).toMatch(/--data is required/);
    expect((await restoreInto(file, join(scratch, 'd6'), 'no spaces')).err).toMatch(
      /--cluster-id.*must be 1-64 letters/,
    );
  });

  it('refuses to overwrite a file, without the admin token, from a paused replica and from none', async () => {
    const existing = join(scratch, 'exists');
    writeFileSync(existing, 'keep me');
    const r = await backup(live(), existing);
    expect(r.err).toMatch(/--out .*exists: a backup never overwrites a file/);
    expect(r.code).toBe(2);
    expect(readFileSync(existing, 'utf8')).toBe('keep me');
    const wrongToken = join(scratch, 'wrong.token');
    writeFileSync(wrongToken, 'not-the-admin-token-but-long-enough\n');
    const out = join(scratch, 'x.creek-backup');
    const denied = await creek(
      'backup',
      '--url',
      old.httpUrl(live()),
      '--admin-token-file',
      wrongToken,
      '--out',
      out,
    );
    expect(denied.err).toMatch(/401 admin actions need `authorization: Bearer <admin token>`/);
    expect(denied.code).toBe(1);
    const nobody = await creek(
      'backup',
      '--url',
      'http://127.0.0.1:1',
      '--admin-token-file',
      tokenFile,
      '--out',
      out,
    );
    expect(nobody.err).toMatch(/nothing answers at http:\/\/127\.0\.0\.1:1/);
    expect(
      (await creek('backup', '--url', 'ftp://x', '--admin-token-file', tokenFile, '--out', out))
        .err,
    ).toMatch(/--url.*must be http:\/\/host:port/s);
    // A paused replica vouches for no state: it refuses, with why.
    const i = live();
    await old.admin(i, 'pause');
    const paused = await backup(i, out);
    await old.admin(i, 'resume');
    expect(paused.err).toMatch(/503 no backup from this replica now: this replica is paused/);
    expect(paused.code).toBe(1);
    // The endpoint takes POST only, and the admin token only.
    const get = await old.request(i, '/admin/backup', {
      headers: { authorization: `Bearer ${old.adminToken}` },
    });
    expect(get.status).toBe(405);
    const client = await old.request(i, '/admin/backup', {
      method: 'POST',
      headers: { authorization: `Bearer ${old.token}` },
    });
    expect(client.status).toBe(401);
    // Nothing was left behind by the failed attempts.
    expect(() => readFileSync(out)).toThrow();
    expect(readdirSync(scratch).filter((f) => f.includes('partial'))).toEqual([]);
  });
});
