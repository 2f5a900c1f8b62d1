/**
 * Creek against what its users would pick instead, measured in one run on this machine: etcd (a
 * 3-member cluster) for the strong path, Redis for the weak one.
 *
 *   npm run bench:peers [-- --ops 2000 --rounds 3 --seconds 5 --outstanding 64 --fsync both]
 *                       [-- --auth both|off --peers on|off]
 *
 * Starts, on loopback ports, a 3-replica Creek cluster (LocalCluster, the built-in ops), a
 * 3-member etcd cluster (Debian's `etcd`) and a Redis server without persistence (Debian's
 * `redis-server`); the binaries are installed with apt-get when missing (as root, or with sudo).
 * Each system is driven through its standard Node client — `@creek/client`, `etcd3`, `ioredis` —
 * from this process, the Creek and etcd clients connected to a follower (not the leader):
 *
 *  - sequential latency, one op outstanding, `--ops` ops per cell: Creek strong kv.put
 *    (`invokeStrong`, done at its stable answer) against an etcd put, Creek strong kv.get against
 *    an etcd linearizable get, Creek weak kv.put (`invokeWeak`, done at its tentative answer)
 *    against a Redis SET, Creek weak kv.get against a Redis GET;
 *  - throughput with `--outstanding` ops in flight for `--seconds`: strong put against etcd put,
 *    weak put against Redis SET.
 *
 * `--fsync both` (the default) runs everything twice: with fsync on both sides (Creek `--fsync`,
 * etcd as shipped), and with fsync off on both (Creek without it, etcd `--unsafe-no-fsync`); Redis
 * never persists. Cells run in `--rounds` rounds that interleave the systems (the machine's speed
 * drifts), and the table shows the median over rounds of each cell's p50, p90, p99 and p99.9, and
 * of Creek's ratio to the peer. The issue's targets are printed beside them, not asserted.
 *
 * In the same rounds, the floors (floors.ts): `@creek/client` against servers that only parse a
 * frame, commit one SQLite row (with fsync as the mode says) and answer, with no Creek in them;
 * one alone under the weak put (the least any answer takes), and one relaying through another
 * under the strong put (4 hops and 3 commits in sequence: the path of Creek's stable answer at a
 * follower — the origin's Req, the leader's vote, the origin's vote and decision — without Creek's
 * work). No server on this stack and machine answers that client faster than the first, and no
 * Creek replica faster than the second, so a floor past a target ("floor past target": yes) puts
 * it out of reach here; below it, what is left is Creek's own work ("Creek ÷ floor"). The strong
 * put has a second floor, the relay of 3 members: it forwards to two servers and answers at the
 * first answer, so a third member receives, commits and answers every op on the same cores, as
 * the third replica of a 3-replica cluster (Creek's or etcd's) does.
 *
 * `--auth both` (the default) also measures what signed-in users cost: beside the cluster above, a
 * second 3-replica Creek cluster verifies users' tokens (`--auth-secret-file`, HS256; its app
 * opens the built-in ops to signed-in users), its client signed in with a user's token from an
 * auth function (jose, as the app's own sign-in would mint it). In the same rounds, interleaved,
 * the sequential strong and weak kv.put on each, and the ratio of their p50 and p99 (auth on ÷
 * off). A token is verified once per connection and refresh, never per op, so the ratio should be
 * near 1. `--peers off` measures only that (no etcd, Redis or floors): a short run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { connect, type CreekClient } from '@creek/client';
import { LocalCluster } from '@creek/server/node';
import { Etcd3 } from 'etcd3';
import { Redis } from 'ioredis';
import { SignJWT } from 'jose';
import { flagPairs } from './cli-flags.js';
import { startFloors } from './floors.js';
import { ensureInstalled, ports, startRedis } from './peer-servers.js';
import { recordResults } from './results.js';
import { median, quantileOfSorted } from './stats.js';

interface Flags {
  ops: number;
  rounds: number;
  seconds: number;
  outstanding: number;
  fsync: 'both' | 'on' | 'off';
  auth: 'both' | 'off';
  peers: 'on' | 'off';
}

const USAGE =
  'npm run bench:peers [-- --ops 2000 --rounds 3 --seconds 5 --outstanding 64 --fsync both|on|off --auth both|off --peers on|off]';
const log = (line: string): void => void process.stderr.write(`bench:peers: ${line}\n`);
/** The report: stdout, and the dated record in bench/results/. */
const out = recordResults('peers', 'markdown');

function parse(argv: readonly string[]): Flags {
  const f: Flags = {
    ops: 2000,
    rounds: 3,
    seconds: 5,
    outstanding: 64,
    fsync: 'both',
    auth: 'both',
    peers: 'on',
  };
  const fail = (message: string): never => {
    console.error(`bench:peers: ${message}`);
    process.exit(2);
  };
  for (const [name, raw] of flagPairs(argv, USAGE, (n) => n in f, fail)) {
    if (name === 'fsync') {
      if (raw !== 'both' && raw !== 'on' && raw !== 'off') fail('--fsync must be both, on or off');
      f.fsync = raw as Flags['fsync'];
      continue;
    }
    if (name === 'auth') {
      if (raw !== 'both' && raw !== 'off') fail('--auth must be both or off');
      f.auth = raw as Flags['auth'];
      continue;
    }
    if (name === 'peers') {
      if (raw !== 'on' && raw !== 'off') fail('--peers must be on or off');
      f.peers = raw as Flags['peers'];
      continue;
    }
    const n = Number(raw);
    const [lo, hi] =
      name === 'ops'
        ? [10, 1_000_000]
        : name === 'rounds'
          ? [1, 50]
          : name === 'seconds'
            ? [1, 600]
            : [1, 4096];
    if (!Number.isInteger(n) || n < lo || n > hi)
      fail(`--${name} must be a whole number from ${lo} to ${hi}`);
    (f as unknown as Record<string, number>)[name] = n;
  }
  if (f.auth === 'off' && f.peers === 'off')
    fail('--auth off with --peers off measures nothing: leave one of them on');
  return f;
}

interface Peer {
  readonly stop: () => Promise<void>;
}

/** A 3-member etcd cluster on loopback; its client URL of a follower. */
async function startEtcd(fsync: boolean): Promise<Peer & { follower: string; urls: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'creek-bench-etcd-'));
  const [c0, c1, c2, p0, p1, p2] = await ports(6, 24_000);
  const client = [c0!, c1!, c2!].map((p) => `http://127.0.0.1:${p}`);
  const peer = [p0!, p1!, p2!].map((p) => `http://127.0.0.1:${p}`);
  const initial = peer.map((u, i) => `e${i}=${u}`).join(',');
  const procs: ChildProcess[] = [0, 1, 2].map((i) =>
    spawn(
      'etcd',
      [
        '--name',
        `e${i}`,
        '--data-dir',
        join(dir, `e${i}`),
        '--listen-client-urls',
        client[i]!,
        '--advertise-client-urls',
        client[i]!,
        '--listen-peer-urls',
        peer[i]!,
        '--initial-advertise-peer-urls',
        peer[i]!,
        '--initial-cluster',
        initial,
        '--initial-cluster-state',
        'new',
        '--initial-cluster-token',
        'creek-bench',
        '--log-level',
        'error',
        '--logger',
        'zap',
        ...(fsync ? [] : ['--unsafe-no-fsync']),
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    ),
  );
  const stop = async (): Promise<void> => {
    await Promise.all(
      procs.map(
        (p) =>
          new Promise<void>((r) => {
            if (p.exitCode !== null) return r();
            p.once('exit', () => r());
            p.kill('SIGTERM');
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  // The leader, once the cluster answers: a member whose status names another as leader.
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const statuses = await Promise.all(
        client.map(async (url) => {
          const c = new Etcd3({ hosts: url });
          try {
            const s = await c.maintenance.status();
            return { url, member: s.header.member_id, leader: s.leader };
          } finally {
            c.close();
          }
        }),
      );
      const follower = statuses.find((s) => s.leader !== '0' && s.member !== s.leader);
      if (follower !== undefined) return { follower: follower.url, urls: client, stop };
    } catch {
      // Not up yet.
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error('etcd did not elect a leader within 30 s');
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

const SIGNED_IN_APP = fileURLToPath(new URL('./signed-in-kv-app.ts', import.meta.url));

/**
 * A Creek cluster and a client on a follower. `users`: the replicas verify users' tokens with an
 * HS256 secret, and the client signs in as a user, with tokens from an auth function.
 */
async function startCreek(fsync: boolean, users = false): Promise<Peer & { client: CreekClient }> {
  const dir = users ? mkdtempSync(join(tmpdir(), 'creek-bench-users-')) : null;
  const secret = randomBytes(32).toString('hex');
  if (dir !== null) writeFileSync(join(dir, 'users.secret'), secret);
  const cluster = await LocalCluster.start({
    replicas: 3,
    logLevel: 'error',
    fsync,
    ...(dir === null
      ? {}
      : { app: SIGNED_IN_APP, auth: { secretFile: join(dir, 'users.secret') } }),
  });
  const statuses = await cluster.statuses();
  const leader = statuses[0]!.leader;
  const follower = [0, 1, 2].find((i) => i !== leader)!;
  const key = new TextEncoder().encode(secret);
  const client = connect({
    urls: [cluster.url(follower)],
    token: cluster.token,
    // Measured from a follower: it must not move to a replica that answers its probes faster.
    nearest: false,
    // An hour's token, as an identity provider's: verified at the hello, never per op.
    ...(dir === null
      ? {}
      : {
          auth: () =>
            new SignJWT({ sub: 'bench-user' })
              .setProtectedHeader({ alg: 'HS256' })
              .setIssuedAt()
              .setExpirationTime('1h')
              .sign(key),
        }),
  });
  await client.invokeStrong('kv.put', { key: 'warm', value: 0 });
  if (dir !== null && client.identity().user?.id !== 'bench-user')
    throw new Error(`the client is not signed in: ${JSON.stringify(client.identity())}`);
  return {
    client,
    stop: async () => {
      client.close();
      await cluster.stop();
      if (dir !== null) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One op of a cell: resolves when it is done (as its system says). */
type Op = (i: number) => PromiseLike<unknown>;

interface Latencies {
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly p999: number;
}

/** `ops` ops one after another; their latencies in µs (the first 5 % are warm-up). */
async function sequential(op: Op, ops: number): Promise<Latencies> {
  const warm = Math.ceil(ops * 0.05);
  const out: number[] = [];
  for (let i = 0; i < ops + warm; i++) {
    const t = performance.now();
    await op(i);
    if (i >= warm) out.push((performance.now() - t) * 1000);
  }
  out.sort((a, b) => a - b);
  return {
    p50: quantileOfSorted(out, 0.5),
    p90: quantileOfSorted(out, 0.9),
    p99: quantileOfSorted(out, 0.99),
    p999: quantileOfSorted(out, 0.999),
  };
}

/** Ops per second with `outstanding` in flight for `seconds` (after one second of warm-up). */
async function throughput(op: Op, outstanding: number, seconds: number): Promise<number> {
  const warmUntil = performance.now() + 1000;
  const end = warmUntil + seconds * 1000;
  let done = 0;
  let i = 0;
  await Promise.all(
    Array.from({ length: outstanding }, async () => {
      while (performance.now() < end) {
        await op(i++);
        if (performance.now() > warmUntil && performance.now() <= end) done++;
      }
    }),
  );
  return done / seconds;
}

type Side = 'creek' | 'peer' | 'floor' | 'floor3';

interface Row {
  readonly name: string;
  readonly creek: Latencies[];
  readonly peer: Latencies[];
  readonly peerName: string;
  /** The floor under the Creek cell (floors.ts), when it has one; empty otherwise. */
  readonly floor: Latencies[];
  readonly floorName?: string;
  /** The strong put's second floor: the relay of 3 members (floors.ts `relay3`). */
  readonly floor3: Latencies[];
}

/** The sides a cell measures: Creek and the peer, and the floors it has. */
function sidesOf(cell: { readonly floor?: unknown; readonly floor3?: unknown }): Side[] {
  return [
    'creek',
    'peer',
    ...(cell.floor === undefined ? [] : (['floor'] as const)),
    ...(cell.floor3 === undefined ? [] : (['floor3'] as const)),
  ];
}

/** Each round puts a different side first, so that none always follows another's leftovers. */
function order(round: number, sides: readonly Side[]): Side[] {
  const k = round % sides.length;
  return [...sides.slice(k), ...sides.slice(0, k)];
}

const KEYS = 100;

async function runMode(flags: Flags, fsync: boolean): Promise<void> {
  log(
    flags.peers === 'on'
      ? `fsync ${fsync ? 'on' : 'off'}: starting Creek, etcd${fsync ? '' : ' (--unsafe-no-fsync)'} and Redis`
      : `fsync ${fsync ? 'on' : 'off'}: starting Creek without and with users' tokens`,
  );
  const started: Peer[] = [];
  const creek = await startCreek(fsync);
  started.push(creek);
  let e: Etcd3 | null = null;
  let r: Redis | null = null;
  const floorClients: CreekClient[] = [];
  try {
    if (flags.auth === 'both') {
      const signedIn = await startCreek(fsync, true);
      try {
        await runAuthCells(flags, fsync, creek.client, signedIn.client);
      } finally {
        // Stopped before the peers start: its idle replicas would share the cores with them.
        await signedIn.stop();
      }
    }
    if (flags.peers === 'off') return;
    const etcd = await startEtcd(fsync);
    started.push(etcd);
    const redis = await startRedis();
    started.push(redis);
    const floors = await startFloors(fsync);
    started.push(floors);
    e = new Etcd3({ hosts: etcd.follower });
    r = new Redis({ port: redis.port, host: '127.0.0.1' });
    // The token is not checked: a floor takes any hello.
    const durable = connect({ urls: [floors.durable], token: 'floor' });
    const relay = connect({ urls: [floors.relay], token: 'floor' });
    const relay3 = connect({ urls: [floors.relay3], token: 'floor' });
    floorClients.push(durable, relay, relay3);
    await runCells(flags, fsync, creek.client, e, r, { durable, relay, relay3 });
  } finally {
    for (const c of floorClients) c.close();
    e?.close();
    r?.disconnect();
    for (const p of started.reverse()) await p.stop();
  }
}

async function runCells(
  flags: Flags,
  fsync: boolean,
  c: CreekClient,
  e: Etcd3,
  r: Redis,
  floors: { durable: CreekClient; relay: CreekClient; relay3: CreekClient },
): Promise<void> {
  {
    const value = 'v'.repeat(16);
    const key = (i: number): string => `k/${i % KEYS}`;
    for (let i = 0; i < KEYS; i++) {
      await c.invokeStrong('kv.put', { key: key(i), value });
      await e.put(key(i)).value(value);
      await r.set(key(i), value);
    }
    const cells: {
      name: string;
      peerName: string;
      creek: Op;
      peer: Op;
      floor?: Op;
      floorName?: string;
      floor3?: Op;
    }[] = [
      {
        name: 'strong put',
        peerName: 'etcd put',
        creek: (i) => c.invokeStrong('kv.put', { key: key(i), value }),
        peer: (i) => e.put(key(i)).value(value).exec(),
        floor: (i) => floors.relay.invokeStrong('kv.put', { key: key(i), value }),
        floorName: RELAY,
        floor3: (i) => floors.relay3.invokeStrong('kv.put', { key: key(i), value }),
      },
      {
        name: 'strong get',
        peerName: 'etcd linearizable get',
        creek: (i) => c.invokeStrong('kv.get', { key: key(i) }),
        peer: (i) => e.get(key(i)).string(),
      },
      {
        name: 'weak put',
        peerName: 'Redis SET',
        creek: (i) => c.invokeWeak('kv.put', { key: key(i), value }),
        peer: (i) => r.set(key(i), value),
        floor: (i) => floors.durable.invokeWeak('kv.put', { key: key(i), value }),
        floorName: 'durable reply: 2 hops, 1 commit',
      },
      {
        name: 'weak get',
        peerName: 'Redis GET',
        creek: (i) => c.invokeWeak('kv.get', { key: key(i) }),
        peer: (i) => r.get(key(i)),
      },
    ];
    const rows: Row[] = cells.map((x) => ({
      name: x.name,
      peerName: x.peerName,
      creek: [],
      peer: [],
      floor: [],
      floor3: [],
      ...(x.floorName === undefined ? {} : { floorName: x.floorName }),
    }));
    const rates = {
      strong: { creek: [], peer: [], floor: [], floor3: [] } as Record<Side, number[]>,
      weak: { creek: [], peer: [], floor: [], floor3: [] } as Record<Side, number[]>,
    };
    for (let round = 1; round <= flags.rounds; round++) {
      for (const [k, cell] of cells.entries()) {
        for (const who of order(round, sidesOf(cell)))
          rows[k]![who].push(await sequential(cell[who]!, flags.ops));
      }
      for (const [kind, cell] of [
        ['strong', cells[0]!],
        ['weak', cells[2]!],
      ] as const) {
        for (const who of order(round, sidesOf(cell)))
          rates[kind][who].push(await throughput(cell[who]!, flags.outstanding, flags.seconds));
      }
      log(`fsync ${fsync ? 'on' : 'off'}: round ${round}/${flags.rounds} done`);
    }
    report(rows, rates, fsync, flags);
  }
}

/**
 * Creek's strong and weak kv.put, on the cluster without users and on the one that verifies them
 * with the client signed in, interleaved round by round; the table gives p50 and p99 of each and
 * their ratio (auth on ÷ off), medians over rounds.
 */
async function runAuthCells(
  flags: Flags,
  fsync: boolean,
  off: CreekClient,
  on: CreekClient,
): Promise<void> {
  const value = 'v'.repeat(16);
  const key = (i: number): string => `k/${i % KEYS}`;
  const cells = [
    {
      name: 'strong put',
      run: (c: CreekClient) => (i: number) => c.invokeStrong('kv.put', { key: key(i), value }),
    },
    {
      name: 'weak put',
      run: (c: CreekClient) => (i: number) => c.invokeWeak('kv.put', { key: key(i), value }),
    },
  ];
  const sides = { off, on };
  const results = cells.map(() => ({ off: [] as Latencies[], on: [] as Latencies[] }));
  for (let round = 1; round <= flags.rounds; round++) {
    for (const [k, cell] of cells.entries())
      for (const side of round % 2 === 1 ? (['off', 'on'] as const) : (['on', 'off'] as const))
        results[k]![side].push(await sequential(cell.run(sides[side]), flags.ops));
    log(`fsync ${fsync ? 'on' : 'off'}: users' tokens, round ${round}/${flags.rounds} done`);
  }
  out.print(
    `\nsigned-in users: Creek with users' tokens verified (--auth-secret-file, HS256; the client signed in) ÷ without; fsync ${fsync ? 'on' : 'off'}; 3-replica clusters on loopback, clients on a follower; medians of ${flags.rounds} rounds of ${flags.ops} sequential ops`,
  );
  out.print('| figure | auth off p50 / p99 | auth on p50 / p99 | ratio p50 | ratio p99 |');
  out.print('| --- | --- | --- | --- | --- |');
  for (const [k, cell] of cells.entries()) {
    const r = results[k]!;
    const m = (side: Latencies[], q: keyof Latencies) => median(side.map((l) => l[q]));
    const ratio = (q: keyof Latencies) =>
      median(r.on.map((l, i) => l[q] / r.off[i]![q])).toFixed(2);
    out.print(
      `| ${cell.name} | ${us(m(r.off, 'p50'))} / ${us(m(r.off, 'p99'))} | ${us(m(r.on, 'p50'))} / ${us(m(r.on, 'p99'))} | ${ratio('p50')}× | ${ratio('p99')}× |`,
    );
  }
}

const us = (v: number): string => `${Math.round(v).toLocaleString('en-US')} µs`;

function report(
  rows: readonly Row[],
  rates: Record<'strong' | 'weak', Record<Side, number[]>>,
  fsync: boolean,
  flags: Flags,
): void {
  out.print(
    `\nfsync ${fsync ? 'on (Creek --fsync, etcd as shipped)' : 'off (Creek without --fsync, etcd --unsafe-no-fsync)'}; Redis without persistence; 3-replica clusters on loopback, clients on a follower; medians of ${flags.rounds} rounds of ${flags.ops} sequential ops`,
  );
  out.print(
    '| figure | Creek p50 / p90 / p99 / p99.9 | peer p50 / p90 / p99 / p99.9 | ratio p50 | ratio p99 |',
  );
  out.print('| --- | --- | --- | --- | --- |');
  for (const row of rows) {
    const m = (side: Latencies[], q: keyof Latencies) => median(side.map((l) => l[q]));
    const ratio = (q: keyof Latencies) =>
      median(row.creek.map((l, k) => l[q] / row.peer[k]![q])).toFixed(2);
    const cells = (side: Latencies[]) =>
      (['p50', 'p90', 'p99', 'p999'] as const).map((q) => us(m(side, q))).join(' / ');
    out.print(
      `| ${row.name} vs ${row.peerName} | ${cells(row.creek)} | ${cells(row.peer)} | ${ratio('p50')}× | ${ratio('p99')}× |`,
    );
  }
  for (const [kind, peer] of [
    ['strong', 'etcd put'],
    ['weak', 'Redis SET'],
  ] as const) {
    const r = rates[kind];
    out.print(
      `| ${kind} put ops/s, ${flags.outstanding} outstanding vs ${peer} | ${Math.round(median(r.creek)).toLocaleString('en-US')} | ${Math.round(median(r.peer)).toLocaleString('en-US')} | ${median(r.creek.map((x, k) => x / r.peer[k]!)).toFixed(2)}× | |`,
    );
  }
  reportFloors(rows, rates, flags);
}

/** The strong put's floors: the relay (floors.ts `relay`) and the relay of 3 members (`relay3`). */
const RELAY = 'relay: 4 hops, 3 commits';
const RELAY3 = 'relay to 2 members, answered at the first: 3 commits on the path, 4 per op';

/** The targets that a floor bounds: Creek's ratio to the peer, p50 or ops/s. */
const TARGETS: Record<string, { readonly p50?: number; readonly rate?: number }> = {
  'strong put': { p50: 0.6, rate: 2 },
  'weak put': { p50: 1.5, rate: 0.3 },
};

/**
 * The floors' own figures, their ratio to the peer beside the target's (a floor past it puts the
 * target out of reach on this stack and machine), and how far above its floor Creek is.
 */
function reportFloors(
  rows: readonly Row[],
  rates: Record<'strong' | 'weak', Record<Side, number[]>>,
  flags: Flags,
): void {
  out.print(
    '\nfloors (bench/src/floors.ts): @creek/client against servers that only parse, commit one SQLite row and answer, no Creek in them',
  );
  out.print(
    '| floor | p50 / p90 / p99 / p99.9 | floor ÷ peer | target | floor past target | Creek ÷ floor |',
  );
  out.print('| --- | --- | --- | --- | --- | --- |');
  const verdict = (floorRatio: number, target: number | undefined, higherIsBetter: boolean) =>
    target === undefined
      ? ''
      : (higherIsBetter ? floorRatio < target : floorRatio > target)
        ? 'yes'
        : 'no';
  for (const row of rows) {
    if (row.floor.length === 0) continue;
    const floorLine = (floor: readonly Latencies[], name: string): void => {
      const m = (q: keyof Latencies) => median(floor.map((l) => l[q]));
      const floorRatio = median(floor.map((l, k) => l.p50 / row.peer[k]!.p50));
      const creekRatio = median(row.creek.map((l, k) => l.p50 / floor[k]!.p50));
      const target = TARGETS[row.name]?.p50;
      out.print(
        `| under ${row.name} (${name}) vs ${row.peerName} | ${(['p50', 'p90', 'p99', 'p999'] as const).map((q) => us(m(q))).join(' / ')} | ${floorRatio.toFixed(2)}× | p50 ≤ ${target ?? '–'}× | ${verdict(floorRatio, target, false)} | ${creekRatio.toFixed(2)}× |`,
      );
    };
    floorLine(row.floor, row.floorName ?? '');
    if (row.floor3.length > 0) floorLine(row.floor3, RELAY3);
    // The weak put's tail target is Creek's p99 against its own p50: the floor's own ratio says
    // how much of it this machine's scheduling alone takes.
    if (row.name === 'weak put') {
      const floorTail = median(row.floor.map((l) => l.p99 / l.p50));
      const creekTail = median(row.creek.map((l) => l.p99 / l.p50));
      out.print(
        `| under weak put p99 ÷ its own p50 | ${floorTail.toFixed(2)}× | | ≤ 3× | ${verdict(floorTail, 3, false)} | Creek's: ${creekTail.toFixed(2)}× |`,
      );
    }
  }
  for (const [kind, peer] of [
    ['strong', 'etcd put'],
    ['weak', 'Redis SET'],
  ] as const) {
    const r = rates[kind];
    const target = TARGETS[`${kind} put`]?.rate;
    for (const [floor, name] of [
      [r.floor, kind === 'strong' ? ` (${RELAY})` : ''],
      [r.floor3, ` (${RELAY3})`],
    ] as const) {
      if (floor.length === 0) continue;
      const floorRatio = median(floor.map((x, k) => x / r.peer[k]!));
      const creekRatio = median(r.creek.map((x, k) => x / floor[k]!));
      out.print(
        `| under ${kind} put ops/s${name}, ${flags.outstanding} outstanding vs ${peer} | ${Math.round(median(floor)).toLocaleString('en-US')} ops/s | ${floorRatio.toFixed(2)}× | ≥ ${target ?? '–'}× | ${verdict(floorRatio, target, true)} | ${creekRatio.toFixed(2)}× |`,
      );
    }
  }
}

async function main(): Promise<void> {
  const flags = parse(process.argv.slice(2));
  if (flags.peers === 'on')
    ensureInstalled(
      [
        ['etcd', 'etcd-server'],
        ['redis-server', 'redis-server'],
      ],
      log,
    );
  if (flags.peers === 'on')
    out.print(
      'targets (issue): strong put p50 ≤ 0.6× etcd and p99 ≤ 1.0×; strong get p50 ≤ 0.8× etcd linearizable get; weak put p50 ≤ 1.5× Redis SET and p99 ≤ 3× its own p50; strong put ops/s ≥ 2× etcd; weak put ops/s ≥ 0.3× Redis SET',
    );
  for (const fsync of flags.fsync === 'both' ? [false, true] : [flags.fsync === 'on'])
    await runMode(flags, fsync);
  out.save();
}

main().catch((e: unknown) => {
  console.error(`bench:peers: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.exit(1);
});
