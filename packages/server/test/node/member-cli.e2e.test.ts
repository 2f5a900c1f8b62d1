import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isFree, LocalCluster } from '../../src/node/local-cluster.js';

/**
 * `creek member` and the membership admin API as an operator meets them: a real cluster, the
 * `creek` binary run with plain node, its exit status and what it prints, typos and wrong
 * credentials included; then a replica lost for good replaced through the command, and the new one
 * started as the command says.
 */
const BIN = fileURLToPath(new URL('../../bin/creek.js', import.meta.url));
const ENV = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !k.startsWith('CREEK_')),
);

let cluster: LocalCluster;
let joiner: ChildProcess | null = null;
let scratch: string;

function creek(...args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: ENV });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** `creek member …` against replica `i`, with the admin token unless `token` says otherwise. */
function member(action: string, i: number, ...args: string[]) {
  return creek(
    'member',
    action,
    '--url',
    cluster.httpUrl(i),
    '--admin-token-file',
    join(cluster.dir, 'admin.token'),
    ...args,
  );
}

beforeAll(async () => {
  cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
  scratch = mkdtempSync(join(tmpdir(), 'creek-member-'));
});

afterAll(async () => {
  joiner?.kill('SIGKILL');
  await cluster.stop(1_000);
  rmSync(scratch, { recursive: true, force: true });
});

describe('creek member', () => {
  it('lists the members, the leader and the replica asked', () => {
    const r = member('list', 1);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    for (const i of [0, 1, 2]) expect(r.out).toMatch(new RegExp(`^\\s*${i}  ws://`, 'm'));
    expect(r.out).toMatch(/\(leader\)/);
    expect(r.out).toMatch(/^\s*1 .*\(asked\)/m);
  });

  it('says what is wrong with how it was called, and exits 2', () => {
    const cases: [string[], RegExp][] = [
      [['lst'], /unknown action 'lst': did you mean 'list'\?/],
      [['add', '--url', 'http://127.0.0.1:1', '--admin-token-file', 'x'], /needs --id/],
      [
        ['add', '--id', '4', '--url', 'http://127.0.0.1:1', '--admin-token-file', 'x'],
        /needs --address/,
      ],
      [
        [
          'add',
          '--id',
          '300',
          '--address',
          'ws://h:1',
          '--url',
          'http://h:1',
          '--admin-token-file',
          'x',
        ],
        /--id 300 must be a replica id, 0-255/,
      ],
      [
        [
          'add',
          '--id',
          '4',
          '--address',
          'http://h:1',
          '--url',
          'http://h:1',
          '--admin-token-file',
          'x',
        ],
        /--address http:\/\/h:1 must be ws:\/\/host:port/,
      ],
      [['list', '--url', 'h:1', '--admin-token-file', 'x'], /--url h:1 must be http:\/\/host:port/],
      [['list', '--adress', 'x'], /unknown flag --adress: did you mean --address\?/],
      [
        [
          'replace',
          '--id',
          '2',
          '--new-id',
          '2',
          '--address',
          'ws://h:1',
          '--url',
          'http://h:1',
          '--admin-token-file',
          join(cluster.dir, 'admin.token'),
        ],
        /--new-id other than --id/,
      ],
    ];
    for (const [args, message] of cases) {
      const r = creek('member', ...args);
      expect(r.err, args.join(' ')).toMatch(message);
      expect(r.code, args.join(' ')).toBe(2);
    }
  });

  it('reports what the cluster refuses, and exits 1', () => {
    const refused: [string, string[], RegExp][] = [
      ['remove', ['--id', '7'], /replica 7 is not a member \(members: 0, 1, 2\)/],
      ['add', ['--id', '1', '--address', 'ws://127.0.0.1:9'], /replica 1 is a member already/],
      ['add', ['--id', '9', '--address', 'wss://127.0.0.1:9'], /needs a ws:\/\/ URL/],
    ];
    for (const [action, args, message] of refused) {
      const r = member(action, 0, ...args);
      expect(r.err, `${action} ${args.join(' ')}`).toMatch(message);
      expect(r.code).toBe(1);
    }
    // The client token is not the admin token.
    const wrong = creek(
      'member',
      'list',
      '--url',
      cluster.httpUrl(0),
      '--admin-token-file',
      join(cluster.dir, 'client.token'),
    );
    expect(wrong.err).toMatch(/401 .*needs `authorization: Bearer <monitor or admin token>`/);
    expect(wrong.code).toBe(1);
    const nobody = creek(
      'member',
      'list',
      '--url',
      'http://127.0.0.1:1',
      '--admin-token-file',
      join(cluster.dir, 'admin.token'),
    );
    expect(nobody.err).toMatch(/nothing answers at http:\/\/127.0.0.1:1/);
    expect(nobody.code).toBe(1);
  });
});

describe('the membership admin API', () => {
  const post = (path: string, token: string | null) =>
    cluster.request(0, path, {
      method: 'POST',
      ...(token === null ? {} : { headers: { authorization: `Bearer ${token}` } }),
    });

  it('refuses changes without the admin token, and malformed ones with a reason', async () => {
    expect((await post('/admin/members/remove?id=2', null)).status).toBe(401);
    expect((await post('/admin/members/remove?id=2', 'x'.repeat(40))).status).toBe(401);
    const malformed: [string, number, RegExp][] = [
      ['/admin/members/remove', 400, /needs \?id=/],
      ['/admin/members/remove?id=2.5', 400, /needs \?id=/],
      ['/admin/members/remove?id=-1', 400, /needs \?id=/],
      ['/admin/members/remove?id=99999', 400, /needs \?id=/],
      ['/admin/members/add?id=5', 400, /needs &url=/],
      ['/admin/members/add?id=5&url=http://h:1', 400, /needs &url=/],
      [`/admin/members/add?id=5&url=ws://${'h'.repeat(3000)}:1`, 400, /needs &url=/],
      ['/admin/members/rename?id=5', 404, /membership actions: add/],
    ];
    for (const [path, status, error] of malformed) {
      const r = await post(path, cluster.adminToken);
      expect(r.status, path.slice(0, 80)).toBe(status);
      expect(((await r.json()) as { error: string }).error, path.slice(0, 80)).toMatch(error);
    }
    const get = await cluster.request(0, '/admin/members/remove?id=2', {
      headers: { authorization: `Bearer ${cluster.adminToken}` },
    });
    expect(get.status).toBe(405);
    // Nothing changed.
    const m = (await (await cluster.monitor(0, '/members')).json()) as {
      current: { members: { id: number }[] };
    };
    expect(m.current.members.map((x) => x.id)).toEqual([0, 1, 2]);
    expect((await cluster.request(0, '/members')).status).toBe(401);
  });
});

describe('a replica lost for good, replaced with creek member replace', () => {
  it('is removed, the new one starts as the command says and joins, and the cluster serves', async () => {
    cluster.kill(2);
    let port = 0;
    for (let p = cluster.basePort + 10; port === 0; p++) if (await isFree(p, '127.0.0.1')) port = p;
    const address = `ws://127.0.0.1:${port}`;
    const r = member('replace', 0, '--id', '2', '--new-id', '3', '--address', address);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/removed replica 2: the members are 0, 1/);
    expect(r.out).toMatch(/added replica 3: the members are 0, 1, 3/);
    const peers = /--peers (\S+)/.exec(r.out)![1]!;
    expect(peers).toBe(
      `0=${cluster.httpUrl(0).replace('http', 'ws')},1=${cluster.httpUrl(1).replace('http', 'ws')}`,
    );
    joiner = spawn(
      process.execPath,
      [
        BIN,
        'start',
        '--join',
        '--id',
        '3',
        '--listen',
        `127.0.0.1:${port}`,
        '--peers',
        peers,
        '--data',
        join(scratch, 'replica-3'),
        '--secret-file',
        join(cluster.dir, 'cluster.secret'),
        '--token-file',
        join(cluster.dir, 'client.token'),
        '--admin-token-file',
        join(cluster.dir, 'admin.token'),
        '--log-level',
        'error',
      ],
      { stdio: ['ignore', 'ignore', 'inherit'], env: ENV },
    );
    const status = async () => {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/status`, {
          headers: { authorization: `Bearer ${cluster.adminToken}` },
        });
        return res.ok
          ? ((await res.json()) as {
              learning: boolean;
              transfers: { installed: number };
              membership: { members: number[] };
            })
          : null;
      } catch {
        return null;
      }
    };
    await cluster.until(
      async () => {
        const s = await status();
        return s !== null && !s.learning && s.membership.members.join() === '0,1,3';
      },
      30_000,
      'replica 3 serving',
    );
    expect((await status())!.transfers.installed).toBeGreaterThanOrEqual(1);
    const list = member('list', 0);
    expect(list.code).toBe(0);
    expect(list.out).toMatch(/^\s*3 {2}ws:\/\/127\.0\.0\.1/m);
    expect(list.out).toMatch(/removed before: 2/);
  });
});
