/**
 * Soak: does a replica's memory and disk level off under steady load, or grow with the op count?
 *
 *   npm run bench:soak [-- --ops 1000000 --keys 10000 --strong-every 100 --samples 20]
 *
 * Starts a local cluster of real `creek start` processes (LocalCluster, as `creek dev` does) and
 * drives it with `--connections` raw WebSocket clients (the wire protocol, no SDK, so the client is
 * not the bottleneck), spread over the replicas, each keeping `--window` ops outstanding. Op n
 * (counted over all connections) is strong when n is a multiple of `--strong-every`, a weak
 * kv.increment otherwise (every 10th weak op a kv.put), on one of `--keys` keys. A weak op is done
 * at its tentative view, a strong one at its stable view.
 *
 * The load is what the cluster sustains: weak ops are done at their origin's tentative view, so
 * nothing else would stop a client from running ahead of a replica that falls behind (on a small
 * machine the replicas share few cores), and a replica that falls behind gets slower still (an op
 * landing in the middle of a long tentative list has the ops after it re-validated); when a
 * replica's tentative list passes `--max-backlog` ops, issuing pauses until every replica is below
 * a tenth of it. Paused time is reported.
 *
 * Every ops/`--samples` completed ops it reads each replica's /status (the process RSS, what the
 * replica holds: versions, Reqs gossip keeps, Paxos instances, checkpoints) and the size of its
 * data directory, and prints a table. At the end the cluster must converge (same committed count
 * and state everywhere); then each replica's RSS growth over the last third of the samples is
 * compared with the first third (which includes start-up and filling the key set): if memory grew
 * with the op count, the last third would grow about as much as the first.
 *
 * Progress goes to stderr, the samples and the verdict to stdout.
 */
import { readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { LocalCluster } from '@creek/server/node';
import type WebSocket from 'ws';
import { flagPairs } from './cli-flags.js';
import { completion, openRaw, type RawFrame } from './raw-client.js';
import { recordResults } from './results.js';
import { ReplicaStatusSchema, type ReplicaStatus } from '@creek/protocol';

/** The report: stdout, and the dated record in bench/results/. */
const out = recordResults('soak', 'text');

interface Flags {
  ops: number;
  keys: number;
  'strong-every': number;
  replicas: number;
  connections: number;
  window: number;
  samples: number;
  'checkpoint-every': number;
  'max-backlog': number;
  rate: number;
}

const USAGE = `npm run bench:soak [-- --ops 1000000 --keys 10000 --strong-every 100 --samples 20]
  --ops               ops to run in all (default 1000000)
  --keys              key set size (default 10000)
  --strong-every      every n-th op is strong (default 100)
  --replicas          replicas in the local cluster (default 3)
  --connections       client connections, spread over the replicas (default 3)
  --window            ops outstanding per connection (default 64)
  --samples           samples taken over the run (default 20)
  --checkpoint-every  finalized ops between checkpoints, 0 for the replicas' default (default 0)
  --max-backlog       pause issuing while a replica has more tentative ops (default 5000)
  --rate              most ops issued per second, 0 for no limit (default 2500)`;

function parseArgs(argv: readonly string[]): Flags {
  const flags: Flags = {
    ops: 1_000_000,
    keys: 10_000,
    'strong-every': 100,
    replicas: 3,
    connections: 3,
    window: 64,
    samples: 20,
    'checkpoint-every': 0,
    'max-backlog': 5_000,
    rate: 2_500,
  };
  for (const [name, raw] of flagPairs(argv, USAGE, (n) => n in flags, fail)) {
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 0) fail(`--${name} needs a whole number, got '${raw}'`);
    flags[name as keyof Flags] = value;
  }
  if (flags.ops < 100) fail('--ops must be at least 100');
  if (flags.keys < 1) fail('--keys must be at least 1');
  if (flags['strong-every'] < 1) fail('--strong-every must be at least 1');
  if (flags.replicas < 1 || flags.replicas > 15) fail('--replicas must be between 1 and 15');
  if (flags.connections < 1) fail('--connections must be at least 1');
  if (flags.window < 1 || flags.window > 1024) fail('--window must be between 1 and 1024');
  if (flags.samples < 3) fail('--samples must be at least 3');
  if (flags['max-backlog'] < 10) fail('--max-backlog must be at least 10');
  return flags;
}

function fail(message: string): never {
  console.error(`bench:soak: ${message}`);
  process.exit(2);
}

const progress = (line: string): void => {
  process.stderr.write(`· ${line}\n`);
};

// ---------------------------------------------------------------------------------------------
// A raw protocol client: hello, then invoke frames; a weak op is done at its first view, a strong
// op at its stable view or confirm.

class Conn {
  private readonly pending = new Map<string, boolean>();
  private next = 0;
  errors = 0;
  firstError: string | null = null;
  private closing = false;
  private ws!: WebSocket;

  private constructor(
    private readonly name: string,
    private readonly onDone: (conn: Conn) => void,
  ) {}

  static async open(
    url: string,
    token: string,
    name: string,
    onDone: (c: Conn) => void,
  ): Promise<Conn> {
    const conn = new Conn(name, onDone);
    conn.ws = await openRaw(url, token, (f) => conn.onFrame(f));
    conn.ws.on('close', () => {
      if (!conn.closing) {
        console.error(`bench:soak: connection to ${url} closed during the run`);
        process.exit(1);
      }
    });
    return conn;
  }

  get inFlight(): number {
    return this.pending.size;
  }

  issue(n: number, keys: number, strongEvery: number): void {
    const opId = `${this.name}.${this.next++}`;
    const strong = n % strongEvery === 0;
    const key = `k${Math.floor(Math.random() * keys)}`;
    const [op, args] =
      !strong && n % 10 === 0 ? ['kv.put', { key, value: n }] : ['kv.increment', { key }];
    this.pending.set(opId, strong);
    this.ws.send(
      JSON.stringify({ t: 'invoke', opId, op, args, level: strong ? 'strong' : 'weak' }),
    );
  }

  private onFrame(f: RawFrame): void {
    if (f.opId === undefined) return;
    const strong = this.pending.get(f.opId);
    if (strong === undefined) return;
    const c = completion(f, strong);
    if (c === null) return; // a strong op's tentative view: not done
    if (!c.ok) {
      this.errors++;
      this.firstError ??= c.error;
    }
    this.pending.delete(f.opId);
    this.onDone(this);
  }

  close(): void {
    this.closing = true;
    this.ws.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Samples

interface ReplicaSample {
  rss: number;
  heapUsed: number;
  dirBytes: number;
  records: number;
  versions: number;
  gossipHeld: number;
  paxosHeld: number;
  checkpoints: number;
  committed: number;
}

interface Sample {
  ops: number;
  seconds: number;
  replicas: ReplicaSample[];
}

function dirBytes(dir: string): number {
  let total = 0;
  try {
    for (const f of readdirSync(dir)) total += statSync(join(dir, f)).size;
  } catch {
    // Not created yet.
  }
  return total;
}

/** GET /status of replica i, tried again a few times (a busy replica may reset a kept-alive socket). */
async function status(cluster: LocalCluster, i: number): Promise<ReplicaStatus> {
  for (let attempt = 1; ; attempt++) {
    try {
      const r = await cluster.monitor(i, '/status');
      return ReplicaStatusSchema.parse(await r.json());
    } catch (err) {
      if (attempt >= 5) throw err;
      await new Promise((r) => setTimeout(r, 200 * attempt));
    }
  }
}

async function sample(cluster: LocalCluster, ops: number, startedAt: number): Promise<Sample> {
  const replicas = await Promise.all(
    Array.from({ length: cluster.size }, async (_, i): Promise<ReplicaSample> => {
      const s = await status(cluster, i);
      return {
        rss: s.rss,
        heapUsed: s.memory.heapUsed,
        dirBytes: dirBytes(join(cluster.dir, `replica-${i}`)),
        records: s.storage.records,
        versions: s.metrics.versions,
        gossipHeld: s.memory.gossipHeld,
        paxosHeld: s.memory.paxosAccepted + s.memory.paxosDecided,
        checkpoints: s.memory.checkpoints,
        committed: s.committed,
      };
    }),
  );
  return { ops, seconds: (performance.now() - startedAt) / 1000, replicas };
}

const MB = (b: number): string => (b / (1 << 20)).toFixed(1);
const int = (x: number): string => Math.round(x).toLocaleString('en');

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows
    .map((r) => '  ' + r.map((cell, c) => cell.padStart(widths[c]!)).join('  '))
    .join('\n');
}

function printSamples(samples: Sample[], replicas: number): void {
  const head = ['ops', 's'];
  for (let i = 0; i < replicas; i++)
    head.push(`r${i} rss MB`, `heap`, `disk MB`, `records`, `versions`, `held`, `paxos`, `ckpts`);
  const rows = [head];
  for (const s of samples) {
    const row = [int(s.ops), s.seconds.toFixed(0)];
    for (const r of s.replicas)
      row.push(
        MB(r.rss),
        MB(r.heapUsed),
        MB(r.dirBytes),
        int(r.records),
        int(r.versions),
        int(r.gossipHeld),
        int(r.paxosHeld),
        int(r.checkpoints),
      );
    rows.push(row);
  }
  out.print(table(rows));
}

/** Least-squares slope of y over x. */
function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const flags = parseArgs(process.argv.slice(2));
  const total = flags.ops;
  const every = Math.max(1, Math.floor(total / flags.samples));
  out.print(
    `Creek soak: ${int(total)} ops on ${int(flags.keys)} keys, every ${flags['strong-every']}th strong, ` +
      `${flags.connections} connections × ${flags.window} outstanding, at most ${flags.rate === 0 ? 'unlimited' : int(flags.rate)} ops/s, ${flags.replicas} replicas`,
  );
  out.print(
    `  machine: ${os.cpus().length} cores, ${os.cpus()[0]?.model.trim() ?? '?'}; node ${process.version}; ` +
      `load average at start ${os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
  );

  progress(`starting ${flags.replicas} replicas`);
  const cluster = await LocalCluster.start({
    replicas: flags.replicas,
    logLevel: 'error',
    ...(flags['checkpoint-every'] > 0 ? { checkpointEvery: flags['checkpoint-every'] } : {}),
  });
  // Whatever ends this process, the replicas go with it.
  process.once('exit', () => cluster.killAll());
  process.once('SIGINT', () => process.exit(130));
  try {
    const samples: Sample[] = [];
    const startedAt = performance.now();
    samples.push(await sample(cluster, 0, startedAt));

    let issued = 0;
    let completed = 0;
    let nextSample = every;
    let sampling: Promise<void> | null = null;
    let finish: () => void = () => undefined;
    const conns: Conn[] = [];
    // Flow control: a replica far behind pauses the clients until every replica caught up.
    let paused = false;
    let pausedMs = 0;
    let pausedAt = 0;
    let monitoring = true;
    // Rate limit: a token bucket holding at most 20 ms of ops.
    let tokens = 0;
    let filledAt = performance.now();
    const topUp = (): void => {
      const now = performance.now();
      if (flags.rate > 0)
        tokens = Math.min(flags.rate / 50, tokens + ((now - filledAt) * flags.rate) / 1000);
      filledAt = now;
      for (const conn of conns) {
        while (
          !paused &&
          issued < total &&
          conn.inFlight < flags.window &&
          (flags.rate === 0 || tokens >= 1)
        ) {
          tokens--;
          conn.issue(++issued, flags.keys, flags['strong-every']);
        }
      }
    };
    const pacer = setInterval(topUp, 5);
    const monitor = (async () => {
      while (monitoring) {
        try {
          await new Promise((r) => setTimeout(r, 500));
          const backlog = Math.max(
            ...(await Promise.all(
              Array.from(
                { length: cluster.size },
                async (_, i) => (await status(cluster, i)).tentative,
              ),
            )),
          );
          if (!paused && backlog > flags['max-backlog']) {
            paused = true;
            pausedAt = performance.now();
            progress(`a replica has ${int(backlog)} tentative ops: pausing until it catches up`);
          } else if (paused && backlog < flags['max-backlog'] / 10) {
            paused = false;
            pausedMs += performance.now() - pausedAt;
            progress(`resuming after ${((performance.now() - pausedAt) / 1000).toFixed(1)} s`);
            topUp();
          }
        } catch (err) {
          progress(`flow control: /status failed (${String(err)}); trying again`);
        }
      }
    })();
    const finished = new Promise<void>((r) => (finish = r));

    const onDone = (): void => {
      completed++;
      if (completed >= nextSample && sampling === null) {
        nextSample += every;
        const at = completed;
        sampling = sample(cluster, at, startedAt).then((s) => {
          samples.push(s);
          const rss = s.replicas.map((r) => MB(r.rss)).join('/');
          const rate = at / s.seconds;
          progress(
            `${int(at)} ops (${((100 * at) / total).toFixed(0)}%), ${int(rate)} ops/s, rss MB ${rss}`,
          );
          sampling = null;
        });
      }
      if (issued < total) topUp();
      else if (conns.every((c) => c.inFlight === 0)) finish();
    };

    for (let c = 0; c < flags.connections; c++)
      conns.push(await Conn.open(cluster.url(c % cluster.size), cluster.token, `c${c}`, onDone));
    progress(`running ${int(total)} ops`);
    topUp();
    await finished;
    clearInterval(pacer);
    const seconds = (performance.now() - startedAt) / 1000;
    monitoring = false;
    await monitor;
    if (sampling !== null) await sampling;
    for (const conn of conns) conn.close();

    progress('waiting for the replicas to converge');
    const statuses = await cluster.converged(120_000);
    const last = await sample(cluster, completed, startedAt);
    samples.push(last);

    out.print(
      `\n${int(completed)} ops in ${seconds.toFixed(1)} s (${int(completed / seconds)} ops/s); ` +
        `converged: ${int(statuses[0]!.committed)} committed on every replica, same state; ` +
        `issuing paused ${(pausedMs / 1000).toFixed(1)} s for a replica to catch up`,
    );
    const errors = conns.reduce((s, c) => s + c.errors, 0);
    if (errors > 0)
      out.print(
        `  ${int(errors)} ops failed; first: ${conns.find((c) => c.firstError)?.firstError}`,
      );
    out.print(
      '\nSamples per replica (rss and heap of the process, data directory size, records on disk,\n' +
        'versions in the store, Reqs gossip holds, Paxos instances held, checkpoints written):\n',
    );
    printSamples(samples, cluster.size);

    // Levelling: the last sample is after the load stopped; compare the samples under load.
    const loaded = samples.slice(0, -1);
    const third = Math.floor((loaded.length - 1) / 3);
    out.print('\nRSS growth per replica (MB):');
    let allLevel = true;
    for (let i = 0; i < cluster.size; i++) {
      const rss = loaded.map((s) => s.replicas[i]!.rss / (1 << 20));
      const ops = loaded.map((s) => s.ops);
      const n = rss.length - 1;
      const first = rss[third]! - rss[0]!;
      const lastThird = rss[n]! - rss[n - third]!;
      const half = Math.floor(n / 2);
      const perMillion = slope(ops.slice(half), rss.slice(half)) * 1e6;
      const peak = Math.max(...rss);
      // Noise: the garbage collector moves RSS by some MB either way.
      const level = lastThird <= Math.max(first / 3, 0.05 * peak, 8);
      allLevel &&= level;
      out.print(
        `  replica ${i}: first third +${first.toFixed(1)}, last third ${lastThird >= 0 ? '+' : ''}${lastThird.toFixed(1)}, ` +
          `slope over the second half ${perMillion.toFixed(1)} MB per million ops, peak ${peak.toFixed(1)}: ` +
          (level ? 'levelled off' : 'STILL GROWING'),
      );
    }
    const disks = last.replicas.map((r) => MB(r.dirBytes)).join('/');
    out.print(`  disk at the end (MB): ${disks}`);
    out.print(
      allLevel
        ? '\nverdict: RSS levelled off on every replica'
        : '\nverdict: RSS still grows on some replica',
    );
    out.save();
  } finally {
    await cluster.stop();
  }
}

main().catch((err: unknown) => {
  console.error(`bench:soak: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
