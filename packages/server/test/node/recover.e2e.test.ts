import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '@creek/client';
import { readBackup } from '../../src/node/backup-file.js';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { creek } from './creek-command.js';

/**
 * `creek recover` on real processes, in the scenario it is for: of three replicas, two lose their
 * data directories in turn (the second while the first is still rebuilding), so a majority's votes
 * are gone and nothing commits again. The survivor still answers tentatively. `creek recover`
 * refuses while the cluster decides; after the wipes it picks the survivor (the wiped ones are
 * learning), backs it up, lists the ops the new cluster will not hold (the weak ops the survivor
 * answered tentatively since), and writes the first replica of a new cluster. That replica starts
 * alone, two more join it by state transfer, and the new cluster holds every op committed before
 * the loss and takes new ones.
 */
const DEADLINE_MS = 120_000;
const COMMITTED = 40;
const AFTER_LOSS = 3;

let old: LocalCluster;
let recovered: LocalCluster | null = null;
let scratch: string;

function recover(out: string, data: string, ...more: string[]) {
  return creek(
    'recover',
    '--urls',
    [0, 1, 2].map((i) => old.httpUrl(i)).join(','),
    '--admin-token-file',
    join(old.dir, 'admin.token'),
    '--out',
    out,
    '--data',
    data,
    '--id',
    '0',
    '--cluster-id',
    'recovered',
    ...more,
  );
}

beforeAll(async () => {
  old = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
  scratch = mkdtempSync(join(tmpdir(), 'creek-recover-'));
});

afterAll(async () => {
  await recovered?.stop(1_000);
  await old.stop(1_000);
  rmSync(scratch, { recursive: true, force: true });
});

describe('creek recover', () => {
  it(
    'starts a new cluster from the survivor of two wipes, says what it leaves out, and the others rejoin it',
    async () => {
      await old.waitForLeader();
      const client = connect({ urls: old.urls, token: old.token, nearest: false });
      try {
        for (let n = 0; n < COMMITTED; n++)
          await client.invokeStrong('kv.put', { key: `k${n}`, value: n });
      } finally {
        await client.close();
      }
      await old.converged();

      // A cluster that still decides needs no recovery: refused, and nothing written.
      const early = await recover(join(scratch, 'early.creek-backup'), join(scratch, 'early'));
      expect(early.code, early.err).toBe(1);
      expect(early.err).toMatch(/the cluster still decides .*creek member replace/);
      expect(existsSync(join(scratch, 'early.creek-backup'))).toBe(false);
      expect(existsSync(join(scratch, 'early'))).toBe(false);

      // The loss, as the runbook's "a majority lost" tells it: a strong op in flight when the
      // other two stop (frozen first, so the leader still sends it out and accepts it itself),
      // then both lose their data directories and start again. Only a leader can decide that
      // instance, and it needs a promise from a wiped replica, which gives none before it has
      // learned that instance: nothing commits again.
      let survivor = -1;
      await old.until(
        async () => {
          survivor = (await old.statuses()).findIndex((s) => s?.role === 'leader');
          return survivor >= 0;
        },
        DEADLINE_MS,
        'a replica reports that it leads',
      );
      const [a, b] = [0, 1, 2].filter((i) => i !== survivor) as [number, number];
      const late = connect({ urls: [old.url(survivor)], token: old.token, nearest: false });
      try {
        await late.invokeWeak('kv.put', { key: 'connected', value: 1 });
        const proposed = (await old.status(survivor))!.paxos.instancesProposed;
        old.signal(a, 'SIGSTOP');
        old.signal(b, 'SIGSTOP');
        late.invokeStrong('kv.put', { key: 'in-flight', value: 1 }).then(
          () => undefined,
          () => undefined,
        );
        await old.until(
          async () => ((await old.status(survivor))?.paxos.instancesProposed ?? 0) > proposed,
          DEADLINE_MS,
          'the leader proposes the strong op',
        );
        await old.killed(a);
        await old.killed(b);
        for (const i of [a, b]) {
          rmSync(join(old.dir, `replica-${i}`), { recursive: true, force: true });
          old.startReplica(i);
        }
        await old.until(
          async () => {
            const s = await old.statuses();
            return (
              s[survivor]?.waiting?.for === 'votes' &&
              s[a]?.learning === true &&
              s[b]?.learning === true
            );
          },
          DEADLINE_MS,
          `replica ${survivor} says too few can vote, and the wiped ones are learning`,
        );
        // The survivor still answers weak ops, tentatively: they never commit in this cluster.
        // (A weak op's Correctable settles with its tentative answer.)
        for (let n = 0; n < AFTER_LOSS; n++)
          await late.invokeWeak('kv.put', { key: `late${n}`, value: n });
      } finally {
        await late.close();
      }

      const file = join(scratch, 'survivor.creek-backup');
      const data = join(scratch, 'new', 'replica-0');
      const r = await recover(file, data);
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      expect(r.out).toContain(`recovering replica ${survivor} (${old.httpUrl(survivor)})`);
      for (const i of [a, b])
        expect(r.out).toMatch(new RegExp(`replica ${i}, .*not recoverable \\(learning`));
      expect(r.out).toMatch(/NOT in the new cluster: \d+ ops/);
      expect(r.out).toContain('kv.put (weak, tentative)');
      expect(r.out).toContain('kv.put (strong, tentative)');
      expect(r.out).toContain('creek member add');

      // The file is the record: the committed state, and the late ops named as left out.
      const backup = await readBackup(file);
      expect(backup.header.replica).toBe(survivor);
      expect(backup.header.leftOut?.tentative).toBeGreaterThanOrEqual(AFTER_LOSS);
      const keys = new Map(backup.snapshot.state);
      for (let n = 0; n < COMMITTED; n++) expect(keys.get(`k${n}`)).toBe(n);
      for (let n = 0; n < AFTER_LOSS; n++) expect(keys.has(`late${n}`)).toBe(false);
      expect(keys.has('in-flight')).toBe(false);

      // A second run refuses to write over what the first wrote.
      const again = await recover(join(scratch, 'again.creek-backup'), data);
      expect(again.code).toBe(2);
      expect(again.err).toMatch(/--data .* is not empty/);
      expect(existsSync(join(scratch, 'again.creek-backup'))).toBe(false);

      // The new cluster: the recovered replica alone, then two more joining it.
      await old.stop(1_000);
      recovered = await LocalCluster.start({
        replicas: 1,
        dataDir: join(scratch, 'new'),
        clusterId: 'recovered',
        logLevel: 'error',
      });
      const first = await recovered.converged(DEADLINE_MS);
      expect(first[0]!.digest).toBe(backup.stateDigest);
      await recovered.addReplica();
      await recovered.addReplica();
      await recovered.waitForLeader(DEADLINE_MS);
      const all = await recovered.converged(DEADLINE_MS);
      expect(all).toHaveLength(3);
      for (const s of all) expect(s.digest).toBe(backup.stateDigest);

      const fresh = connect({ urls: recovered.urls, token: recovered.token });
      try {
        expect(await fresh.invokeStrong('kv.get', { key: `k${COMMITTED - 1}` })).toBe(
          COMMITTED - 1,
        );
        expect(await fresh.invokeStrong('kv.get', { key: 'late0' })).toBeNull();
        await fresh.invokeStrong('kv.put', { key: 'after-recovery', value: 1 });
        expect(await fresh.invokeStrong('kv.get', { key: 'after-recovery' })).toBe(1);
      } finally {
        await fresh.close();
      }
      const later = await recovered.converged(DEADLINE_MS);
      expect(new Set(later.map((s) => s.digest)).size).toBe(1);
    },
    DEADLINE_MS * 4,
  );

  it('refuses bad settings before it asks any replica', async () => {
    const token = join(old.dir, 'admin.token');
    const used = join(scratch, 'used');
    mkdirSync(used, { recursive: true });
    writeFileSync(join(used, 'x'), '');
    const file = join(scratch, 'a-file');
    writeFileSync(file, '');
    const base = ['recover', '--admin-token-file', token, '--id', '0', '--cluster-id', 'n'];
    const cases: [string[], RegExp][] = [
      [
        [...base, '--out', join(scratch, 'o1'), '--data', join(scratch, 'd1')],
        /--urls is required/,
      ],
      [
        [...base, '--urls', 'ftp://x', '--out', join(scratch, 'o2'), '--data', join(scratch, 'd2')],
        /--urls/,
      ],
      [
        [...base, '--urls', old.httpUrl(0), '--out', file, '--data', join(scratch, 'd3')],
        /--out .* exists/,
      ],
      [
        [...base, '--urls', old.httpUrl(0), '--out', join(scratch, 'o4'), '--data', used],
        /--data .* is not empty/,
      ],
      [
        [...base, '--urls', old.httpUrl(0), '--out', join(scratch, 'o5'), '--data', file],
        /--data .* is a file/,
      ],
      [
        [
          'recover',
          '--urls',
          old.httpUrl(0),
          '--admin-token-file',
          token,
          '--out',
          join(scratch, 'o6'),
          '--data',
          join(scratch, 'd6'),
          '--id',
          '300',
          '--cluster-id',
          'n',
        ],
        /--id 300 must be a replica id/,
      ],
      [[...base, '--url', old.httpUrl(0)], /unknown flag --url: did you mean --urls\?/],
      [
        [
          ...base,
          '--urls',
          Array.from({ length: 16 }, (_, i) => `http://127.0.0.1:${7000 + i}`).join(','),
          '--out',
          join(scratch, 'o8'),
          '--data',
          join(scratch, 'd8'),
        ],
        /lists at most 15 replicas/,
      ],
    ];
    for (const [args, message] of cases) {
      const r = await creek(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err, args.join(' ')).toMatch(message);
    }
    expect(existsSync(join(scratch, 'o4'))).toBe(false);

    // A wrong admin token: every replica refuses its /status, so none is recovered, and nothing
    // is written.
    const forged = join(scratch, 'forged.token');
    writeFileSync(forged, 'not-the-admin-token\n');
    const live = recovered ?? old;
    const refused = await creek(
      'recover',
      '--urls',
      live.httpUrl(0),
      '--admin-token-file',
      forged,
      '--out',
      join(scratch, 'o7'),
      '--data',
      join(scratch, 'd7'),
      '--id',
      '0',
      '--cluster-id',
      'n',
    );
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(/no answer \(401 /);
    expect(refused.err).toMatch(/no replica of --urls can vouch for its state/);
    expect(existsSync(join(scratch, 'o7'))).toBe(false);
    expect(existsSync(join(scratch, 'd7'))).toBe(false);
  });
});
