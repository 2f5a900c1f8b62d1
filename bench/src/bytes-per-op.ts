/**
 * Bytes per operation between a client and its replica: `invoke` (a tentative view, then the stable
 * one — or a short `confirm` when the stable result equals the tentative one, Correctables §5.2)
 * against `invokeWeak` (one tentative view), on the same read-mostly workload. The Correctables
 * paper (§6) reports up to 27% more bytes for incremental consistency; the issue's target is ≤ 15%.
 *
 *   npm run bench:bytes [-- --ops 20000 --reads 0.95 --keys 1000 --value-bytes 16,128,1024
 *                          --clients 3 --in-flight 16 --replicas 3]
 *
 * Starts a LocalCluster (real replica processes). For each value size: every key is first written
 * with a value of that size (JSON-encoded, so reads return that many bytes), then the same seeded
 * op sequence — `--reads` kv.get, the rest kv.put of a fresh value of the same size — runs once
 * with `invokeWeak` and once with `invoke`, from `--clients` @creek/client clients (client i on
 * replica i mod R), each with `--in-flight` ops outstanding. Writes from clients at different
 * replicas race, so some stable results differ from the tentative ones: those cost a full stable
 * view instead of a confirm, and both are counted.
 *
 * Counted: the payload of every WebSocket message each way on the clients' sockets (the SDK gets a
 * counting subclass of `ws` through `connect({ WebSocket })`), per message type; the hello/welcome
 * handshake is left out. "Wire" adds the WebSocket frame headers (2–10 bytes, plus a 4-byte mask
 * from the client; the replicas negotiate no compression), not TCP/IP. Separately, bytes between
 * replicas: the sum over replicas of `creek_peer_bytes_sent_total` (GET /metrics) from the start of
 * a run until the cluster has converged — gossip, Paxos and the idle heartbeats in that time (the
 * idle rate is measured and printed too). Nothing here is timed; elapsed times are for orientation.
 *
 * Progress goes to stderr, the results to stdout.
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { connect, type CreekBindingOptions, type CreekClient } from '@creek/client';
import { LocalCluster } from '@creek/server/node';
import WebSocket from 'ws';
import { flagPairs } from './cli-flags.js';
import {
  describeContextCost,
  describeSharedContextCost,
  measureContextCost,
  measureSharedContextCost,
} from './context-cost.js';
import { recordResults } from './results.js';

/** The report: stdout, and the dated record in bench/results/. */
const out = recordResults('bytes', 'text');

// ---------------------------------------------------------------------------------------------
// Counting sockets

/** Messages, payload bytes and wire bytes by message type (`invoke`, `view:tentative`, …). */
export class ByteCounter {
  readonly sent = new Map<string, Tally>();
  readonly received = new Map<string, Tally>();

  /** Ops confirmed, one per `confirm` frame and one per op id of a `confirms` frame. */
  confirmed = 0;

  /**
   * Stable views received with and without `causes` (explained corrections), and the bytes the
   * causes take in those that carry them (`"causes":[…]` and its comma).
   */
  readonly stableViews = {
    withCauses: { messages: 0, bytes: 0, causeBytes: 0 },
    without: { messages: 0, bytes: 0 },
  };

  note(direction: 'sent' | 'received', text: string): void {
    const type = messageType(text);
    if (direction === 'received' && type === 'view:stable') {
      const bytes = Buffer.byteLength(text, 'utf8');
      const causes = (JSON.parse(text) as { causes?: unknown }).causes;
      if (causes === undefined) {
        this.stableViews.without.messages++;
        this.stableViews.without.bytes += bytes;
      } else {
        const w = this.stableViews.withCauses;
        w.messages++;
        w.bytes += bytes;
        w.causeBytes += Buffer.byteLength(`,"causes":${JSON.stringify(causes)}`, 'utf8');
      }
    }
    if (type === 'confirm') this.confirmed++;
    if (type === 'confirms')
      this.confirmed += (JSON.parse(text) as { opIds: unknown[] }).opIds.length;
    const m = this[direction];
    const c = m.get(type) ?? { messages: 0, bytes: 0, wire: 0 };
    const bytes = Buffer.byteLength(text, 'utf8');
    c.messages++;
    c.bytes += bytes;
    // One frame per message; its header (RFC 6455 §5.2) grows with the payload, and a client
    // masks what it sends with 4 more bytes.
    c.wire += bytes + (bytes < 126 ? 2 : bytes < 65_536 ? 4 : 10) + (direction === 'sent' ? 4 : 0);
    m.set(type, c);
  }

  /** Totals one way, without the handshake (hello, welcome). */
  total(direction: 'sent' | 'received'): Tally {
    const t = { messages: 0, bytes: 0, wire: 0 };
    for (const [type, c] of this[direction]) {
      if (type === 'hello' || type === 'welcome') continue;
      t.messages += c.messages;
      t.bytes += c.bytes;
      t.wire += c.wire;
    }
    return t;
  }

  /** One message type one way (zeros if there was none). */
  of(direction: 'sent' | 'received', type: string): Tally {
    return this[direction].get(type) ?? { messages: 0, bytes: 0, wire: 0 };
  }

  reset(): void {
    this.sent.clear();
    this.received.clear();
    this.confirmed = 0;
    this.stableViews.withCauses = { messages: 0, bytes: 0, causeBytes: 0 };
    this.stableViews.without = { messages: 0, bytes: 0 };
  }

  /** A copy of the numbers as they are now. */
  snapshot(): ByteCounter {
    const copy = new ByteCounter();
    for (const dir of ['sent', 'received'] as const)
      for (const [k, v] of this[dir]) copy[dir].set(k, { ...v });
    copy.confirmed = this.confirmed;
    copy.stableViews.withCauses = { ...this.stableViews.withCauses };
    copy.stableViews.without = { ...this.stableViews.without };
    return copy;
  }
}

export interface Tally {
  messages: number;
  bytes: number;
  wire: number;
}

/** Bytes per full stable view with and without the causes of a correction. */
function explained(c: ByteCounter): string {
  const { withCauses: w, without: o } = c.stableViews;
  const per = (bytes: number, n: number): string => (n === 0 ? '-' : fmt(bytes / n));
  return (
    `full stable views: ${fmt(o.messages, 0)} without causes (${per(o.bytes, o.messages)} B each), ` +
    `${fmt(w.messages, 0)} with causes (${per(w.bytes, w.messages)} B each, of which ` +
    `${per(w.causeBytes, w.messages)} B of causes)`
  );
}

/** `invoke`, `view:tentative`, `view:stable`, `confirm`, `error`, … */
function messageType(text: string): string {
  try {
    const f = JSON.parse(text) as { t?: unknown; level?: unknown };
    const t = typeof f.t === 'string' ? f.t : '?';
    return t === 'view' && typeof f.level === 'string' ? `view:${f.level}` : t;
  } catch {
    return '?';
  }
}

/** The `ws` WebSocket, noting every message it sends and receives in `counter`. */
export function countingWebSocket(counter: ByteCounter): CreekBindingOptions['WebSocket'] {
  class CountingWebSocket extends WebSocket {
    constructor(url: string) {
      super(url);
      this.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
        counter.note('received', isBinary ? '?' : rawText(data));
      });
    }

    override send(data: unknown, ...rest: unknown[]): void {
      if (typeof data === 'string') counter.note('sent', data);
      (super.send as (...a: unknown[]) => void)(data, ...rest);
    }
  }
  // The SDK types its socket's handlers as `(ev: unknown) => void`; ws declares `(ev: Event)`.
  return CountingWebSocket;
}

function rawText(data: WebSocket.RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data as ArrayBuffer).toString('utf8');
}

// ---------------------------------------------------------------------------------------------
// Workload

export interface Op {
  readonly read: boolean;
  readonly key: string;
}

/** A seeded op sequence (xorshift32), so both modes run exactly the same ops. */
export function workload(ops: number, reads: number, keys: number, seed = 0x9e3779b9): Op[] {
  let s = seed >>> 0 || 1;
  const next = (): number => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 0x1_0000_0000;
  };
  return Array.from({ length: ops }, () => ({
    read: next() < reads,
    key: `k${Math.floor(next() * keys)}`,
  }));
}

/** A JSON string value whose encoding is exactly `bytes` bytes long (at least 2: the quotes). */
export function valueOfSize(bytes: number, tag: number): string {
  const body = `v${tag}-`;
  const length = Math.max(0, bytes - 2);
  return (body + 'x'.repeat(Math.max(0, length - body.length))).slice(0, length);
}

type Mode = 'weak' | 'invoke';

/** Runs `ops` over the clients, `inFlight` outstanding per client; resolves when all are final. */
async function run(
  clients: CreekClient[],
  ops: readonly Op[],
  mode: Mode,
  valueBytes: number,
  inFlight: number,
  progress: (done: number) => void,
): Promise<void> {
  let next = 0;
  let done = 0;
  const worker = async (creek: CreekClient): Promise<void> => {
    while (next < ops.length) {
      const i = next++;
      const op = ops[i]!;
      const call = mode === 'weak' ? creek.invokeWeak.bind(creek) : creek.invoke.bind(creek);
      if (op.read) await call('kv.get', { key: op.key });
      else await call('kv.put', { key: op.key, value: valueOfSize(valueBytes, i) });
      if (++done % 1000 === 0) progress(done);
    }
  };
  await Promise.all(clients.flatMap((c) => Array.from({ length: inFlight }, () => worker(c))));
}

// ---------------------------------------------------------------------------------------------
// Peer bytes

async function peerBytesSent(cluster: LocalCluster): Promise<number> {
  let total = 0;
  for (let i = 0; i < cluster.size; i++) {
    const text = await cluster.metrics(i);
    const m = /^creek_peer_bytes_sent_total\{[^}]*\} (\d+(?:\.\d+)?(?:e\+\d+)?)$/m.exec(text);
    if (m === null) throw new Error(`replica ${i}: no creek_peer_bytes_sent_total in /metrics`);
    total += Number(m[1]);
  }
  return total;
}

// ---------------------------------------------------------------------------------------------
// Main

interface Flags {
  /** Live queries per client, each on its own key, running through every run (0: none). */
  watches: number;
  ops: number;
  reads: number;
  keys: number;
  valueBytes: number[];
  clients: number;
  inFlight: number;
  replicas: number;
  contextPairs: number;
}

const USAGE = `npm run bench:bytes [-- --ops 20000 --reads 0.95 --keys 1000 --value-bytes 16,128,1024 --clients 3 --in-flight 16 --replicas 3 --watches 0 --context-pairs 200]
  --ops          ops per run (each value size runs twice: invokeWeak, then invoke; default 20000)
  --reads        fraction of kv.get; the rest are kv.put (default 0.95)
  --keys         key set size, every key written before the runs (default 1000)
  --value-bytes  JSON size of the values, a comma-separated list (default 16,128,1024)
  --clients      clients, client i on replica i mod replicas (default 3)
  --in-flight    ops outstanding per client (default 16)
  --replicas     replicas in the local cluster (default 3)
  --watches      live queries (client.watch of kv.get) per client, each on its own key, through
                 every run; their frames are counted apart (default 0)
  --context-pairs  new clients timed from connect() to their first read, with and without a
                 context token, and weak writes outside and inside a shared context
                 (context-cost.ts), in pairs; 0: none (default 200)`;

function parseArgs(argv: readonly string[]): Flags {
  const flags: Flags = {
    watches: 0,
    ops: 20_000,
    reads: 0.95,
    keys: 1000,
    valueBytes: [16, 128, 1024],
    clients: 3,
    inFlight: 16,
    replicas: 3,
    contextPairs: 200,
  };
  const camel = (name: string) =>
    name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()) as keyof Flags;
  for (const [name, raw] of flagPairs(argv, USAGE, (n) => camel(n) in flags, fail)) {
    const key = camel(name);
    const values = raw.split(',').map(Number);
    if (values.some((v) => !Number.isFinite(v))) fail(`--${name} needs a number, got '${raw}'`);
    if (key === 'valueBytes') flags.valueBytes = values;
    else if (values.length !== 1) fail(`--${name} takes one number`);
    else flags[key] = values[0]!;
  }
  const whole = (n: number, min: number, what: string): void => {
    if (!Number.isInteger(n) || n < min) fail(`${what} must be a whole number ≥ ${min}`);
  };
  whole(flags.ops, 1, '--ops');
  whole(flags.keys, 1, '--keys');
  whole(flags.clients, 1, '--clients');
  whole(flags.inFlight, 1, '--in-flight');
  whole(flags.replicas, 1, '--replicas');
  whole(flags.watches, 0, '--watches');
  whole(flags.contextPairs, 0, '--context-pairs');
  if (flags.watches > 64) fail('--watches must be at most 64 (a connection holds 64 live queries)');
  if (flags.replicas > 15) fail('--replicas must be at most 15');
  if (flags.reads < 0 || flags.reads > 1) fail('--reads must be between 0 and 1');
  for (const v of flags.valueBytes) whole(v, 2, '--value-bytes');
  return flags;
}

function fail(message: string): never {
  console.error(`bench:bytes: ${message}`);
  process.exit(2);
}

const say = (line: string): boolean => process.stderr.write(`${line}\n`);
const fmt = (n: number, digits = 1): string =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const pct = (n: number): string => `${n >= 0 ? '+' : ''}${fmt(n * 100)}%`;

interface Result {
  readonly mode: Mode;
  readonly counter: ByteCounter;
  readonly peerBytes: number;
  readonly seconds: number;
}

async function main(): Promise<void> {
  const flags = parseArgs(process.argv.slice(2));
  say(`bench:bytes: starting a local cluster of ${flags.replicas} replicas ...`);
  const cluster = await LocalCluster.start({ replicas: flags.replicas, logLevel: 'error' });
  const stop = (): void => cluster.killAll();
  process.once('exit', stop);
  process.once('SIGINT', () => process.exit(130));
  const counter = new ByteCounter();
  const WebSocketClass = countingWebSocket(counter);
  const clients = Array.from({ length: flags.clients }, (_, i) =>
    connect({
      urls: [cluster.url(i % cluster.size)],
      token: cluster.token,
      WebSocket: WebSocketClass,
      // Pinned to its replica: the nearest-replica probes (short connections of their own) are
      // not the per-op traffic counted here.
      nearest: false,
    }),
  );
  try {
    await cluster.until(
      async () => clients.every((c) => c.replica() !== null),
      30_000,
      'the clients to connect',
    );
    const ops = workload(flags.ops, flags.reads, flags.keys);
    const reads = ops.filter((o) => o.read).length;
    const results: { valueBytes: number; weak: Result; invoke: Result }[] = [];
    let idleRate = 0;
    for (const valueBytes of flags.valueBytes) {
      say(`bench:bytes: writing ${flags.keys} keys with ${valueBytes}-byte values ...`);
      await Promise.all(
        Array.from({ length: flags.keys }, (_, k) =>
          clients[k % clients.length]!.invokeWeak('kv.put', {
            key: `k${k}`,
            value: valueOfSize(valueBytes, -1),
          }),
        ),
      );
      await cluster.converged(60_000);
      if (idleRate === 0) {
        const before = await peerBytesSent(cluster);
        const t0 = performance.now();
        await new Promise((r) => setTimeout(r, 2_000));
        idleRate = ((await peerBytesSent(cluster)) - before) / ((performance.now() - t0) / 1000);
      }
      const cell = {} as { weak: Result; invoke: Result };
      for (const mode of ['weak', 'invoke'] as const) {
        counter.reset();
        // Live queries on keys the workload writes: each client its own keys, spread over the set.
        const queries = clients.flatMap((c, ci) =>
          Array.from({ length: flags.watches }, (_, j) =>
            c.watch('kv.get', { key: `k${(ci * flags.watches + j) % flags.keys}` }),
          ),
        );
        const peerBefore = await peerBytesSent(cluster);
        const t0 = performance.now();
        await run(clients, ops, mode, valueBytes, flags.inFlight, (done) =>
          say(
            `bench:bytes: ${valueBytes} B, ${mode === 'weak' ? 'invokeWeak' : 'invoke'}: ${done}/${ops.length}`,
          ),
        );
        const seconds = (performance.now() - t0) / 1000;
        await cluster.converged(60_000);
        for (const q of queries) q.close();
        const peerBytes = (await peerBytesSent(cluster)) - peerBefore;
        cell[mode] = { mode, counter: counter.snapshot(), peerBytes, seconds };
        say(`bench:bytes: ${valueBytes} B, ${mode}: ${fmt(seconds)} s`);
      }
      results.push({ valueBytes, ...cell });
    }

    const n = flags.ops;
    out.print(
      `\nbytes per op, client ↔ replica (WebSocket message payload; "wire" adds frame headers)\n` +
        `${fmt(n, 0)} ops per run: ${fmt((100 * reads) / n)}% kv.get, ${fmt((100 * (n - reads)) / n)}% kv.put, ` +
        `${flags.keys} keys; ${flags.clients} clients × ${flags.inFlight} in flight on ${flags.replicas} replicas\n`,
    );
    const rows: string[][] = [
      ['value', 'mode', 'sent/op', 'recv/op', 'total/op', 'wire/op', 'msgs/op', 'peer/op', 's'],
    ];
    for (const r of results) {
      for (const x of [r.weak, r.invoke]) {
        const s = x.counter.total('sent');
        const v = x.counter.total('received');
        rows.push([
          `${r.valueBytes} B`,
          x.mode === 'weak' ? 'invokeWeak' : 'invoke',
          fmt(s.bytes / n),
          fmt(v.bytes / n),
          fmt((s.bytes + v.bytes) / n),
          fmt((s.wire + v.wire) / n),
          fmt((s.messages + v.messages) / n, 2),
          fmt(x.peerBytes / n, 0),
          fmt(x.seconds),
        ]);
      }
    }
    out.print(table(rows));
    out.print(
      `\noverhead of invoke over invokeWeak (target ≤ 15%; Correctables §6: 27% worst case)`,
    );
    for (const r of results) {
      const w = r.weak.counter;
      const c = r.invoke.counter;
      const all = (x: ByteCounter, k: 'bytes' | 'wire'): number =>
        x.total('sent')[k] + x.total('received')[k];
      const confirms = { messages: c.confirmed };
      const stable = c.of('received', 'view:stable');
      const tentative = c.of('received', 'view:tentative');
      // Where the extra bytes per op go, by message type: the invokes ("strong" for "weak"), the
      // tentative views (ordered ops carry their op id; more than one when an op re-executes), the
      // stable results (a confirm each, or a full view when the result changed), and any other
      // message either mode gets.
      const parts: string[] = [];
      for (const dir of ['sent', 'received'] as const) {
        const types = new Set([...w[dir].keys(), ...c[dir].keys()]);
        for (const type of types) {
          if (type === 'hello' || type === 'welcome') continue;
          const delta = (c.of(dir, type).bytes - w.of(dir, type).bytes) / n;
          if (Math.abs(delta) >= 0.05) parts.push(`${fmt(delta)} ${type}`);
        }
      }
      out.print(
        `  ${String(r.valueBytes).padStart(5)} B values: ${pct(all(c, 'bytes') / all(w, 'bytes') - 1)} payload ` +
          `(${pct(all(c, 'wire') / all(w, 'wire') - 1)} wire), ` +
          `+${fmt((all(c, 'bytes') - all(w, 'bytes')) / n)} B/op = ` +
          parts.join(' + ') +
          `\n           stable results: ${fmt(confirms.messages, 0)} confirms, ` +
          `${fmt(stable.messages, 0)} full stable views ` +
          `(${fmt((100 * confirms.messages) / Math.max(1, confirms.messages + stable.messages))}% confirmed), ` +
          `${fmt(tentative.messages - n, 0)} tentative views beyond one per op; ` +
          `between replicas ×${fmt(r.invoke.peerBytes / Math.max(1, r.weak.peerBytes))}` +
          `\n           ${explained(c)}`,
      );
    }
    if (flags.watches > 0) {
      out.print(
        `\nlive queries: ${flags.watches} per client (${flags.watches * flags.clients} in all), each on a key the workload writes`,
      );
      for (const r of results)
        for (const x of [r.weak, r.invoke]) {
          const watchBytes =
            x.counter.of('sent', 'watch').bytes +
            x.counter.of('sent', 'unwatch').bytes +
            x.counter.of('received', 'watched').bytes;
          const all = x.counter.total('sent').bytes + x.counter.total('received').bytes;
          out.print(
            `  ${String(r.valueBytes).padStart(5)} B, ${x.mode === 'weak' ? 'invokeWeak' : 'invoke    '}: ` +
              `${fmt(watchBytes / n)} B/op of live-query frames (${fmt(x.counter.of('received', 'watched').messages, 0)} pushes), ` +
              `${fmt((all - watchBytes) / n)} B/op without them: ${pct(watchBytes / Math.max(1, all - watchBytes))}`,
          );
        }
    }
    out.print(`\nmean message size by type (${results.at(-1)!.valueBytes} B values)`);
    for (const x of [results.at(-1)!.weak, results.at(-1)!.invoke]) {
      const sizes: string[] = [];
      for (const dir of ['sent', 'received'] as const)
        for (const [type, c] of x.counter[dir])
          if (type !== 'hello' && type !== 'welcome')
            sizes.push(`${type} ${fmt(c.bytes / c.messages)} B × ${fmt(c.messages, 0)}`);
      out.print(`  ${x.mode === 'weak' ? 'invokeWeak' : 'invoke    '}: ${sizes.join(', ')}`);
    }
    out.print(
      `\npeer/op: bytes all replicas sent one another from a run's start until they converged, per ` +
        `op; idle, they send ${fmt(idleRate, 0)} B/s (heartbeats), included`,
    );
    if (flags.contextPairs > 0) {
      counter.reset();
      const cost = await measureContextCost(cluster, clients, flags.contextPairs, say);
      const asked = counter.of('sent', 'context');
      const answered = counter.of('received', 'context');
      out.print(
        describeContextCost(cost, flags.replicas) +
          `\n  a request ${fmt(asked.bytes / Math.max(1, asked.messages))} B, its answer ` +
          `${fmt(answered.bytes / Math.max(1, answered.messages))} B (payload, ${asked.messages} of each)`,
      );
      const shared = await measureSharedContextCost(clients[0]!, flags.contextPairs, say);
      out.print(describeSharedContextCost(shared));
    }
    out.save();
  } finally {
    for (const c of clients) c.close();
    process.off('exit', stop);
    await cluster.stop(2_000);
  }
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '),
    )
    .join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(
        `bench:bytes: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
      );
      process.exit(1);
    },
  );
}
