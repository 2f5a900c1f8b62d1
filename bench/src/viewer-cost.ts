/**
 * What a viewer of the event stream (/events, the cluster visualizer's source) costs the replica
 * it watches: its throughput with and without one attached, in one run.
 *
 *   npm run bench:viewer [-- --seconds 5 --rounds 3 --outstanding 64]
 *
 * Starts 3 replica processes (LocalCluster, the built-in ops), and one SDK client on replica 0
 * that keeps `--outstanding` weak kv.put ops in flight over 1,000 keys. Rounds of `--seconds`
 * alternate: no viewer, then a viewer that reads every frame replica 0 sends it. Prints each
 * round's throughput and, for the rounds with a viewer, the events it received and the events the
 * replica dropped for it (sampled out above 5,000 a second); then the medians and their ratio.
 * Nothing is asserted: this measures.
 */
import { performance } from 'node:perf_hooks';
import { connect } from '@creek/client';
import { EVENTS_PATH, EVENTS_VERSION } from '@creek/protocol';
import { LocalCluster } from '@creek/server/node';
import WebSocket from 'ws';
import { flagPairs } from './cli-flags.js';
import { median } from './stats.js';
import { recordResults } from './results.js';

/** The report: stdout, and the dated record in bench/results/. */
const out = recordResults('viewer', 'text');

interface Flags {
  seconds: number;
  rounds: number;
  outstanding: number;
}

const USAGE = 'npm run bench:viewer [-- --seconds 5 --rounds 3 --outstanding 64]';
const log = (line: string): void => void process.stderr.write(`bench:viewer: ${line}\n`);

function parse(argv: readonly string[]): Flags {
  const f: Flags = { seconds: 5, rounds: 3, outstanding: 64 };
  const fail = (message: string): never => {
    console.error(`bench:viewer: ${message}`);
    process.exit(2);
  };
  for (const [name, raw] of flagPairs(argv, USAGE, (n) => n in f, fail)) {
    const n = Number(raw);
    const [lo, hi] = name === 'seconds' ? [0.5, 600] : name === 'rounds' ? [1, 50] : [1, 1024];
    if (!Number.isFinite(n) || n < lo || n > hi || (name !== 'seconds' && !Number.isInteger(n)))
      fail(
        `--${name} must be ${name === 'seconds' ? 'a number' : 'a whole number'} from ${lo} to ${hi}`,
      );
    f[name as keyof Flags] = n;
  }
  return f;
}

/** A viewer of replica i's stream: counts the events it receives and the drops it is told of. */
async function attachViewer(
  cluster: LocalCluster,
  i: number,
): Promise<{ events: number; dropped: number; close(): void }> {
  const ws = new WebSocket(cluster.url(i).replace(/\/client$/, EVENTS_PATH));
  const v = { events: 0, dropped: 0, close: () => ws.close() };
  await new Promise<void>((resolve, reject) => {
    ws.once('error', reject);
    ws.once('open', () =>
      ws.send(JSON.stringify({ t: 'watch', version: EVENTS_VERSION, token: cluster.adminToken })),
    );
    ws.on('message', (d) => {
      const f = JSON.parse(d.toString()) as {
        t: string;
        events?: { e: string; count?: number }[];
        message?: string;
      };
      if (f.t === 'hello') resolve();
      else if (f.t === 'error') reject(new Error(f.message));
      for (const e of f.events ?? []) {
        v.events++;
        if (e.e === 'dropped') v.dropped += e.count ?? 0;
      }
    });
  });
  return v;
}

async function main(): Promise<void> {
  const flags = parse(process.argv.slice(2));
  const cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
  try {
    const client = connect({ urls: [cluster.url(0)], token: cluster.token });
    let seq = 0;
    const round = async (): Promise<number> => {
      let done = 0;
      let running = true;
      const worker = async (): Promise<void> => {
        while (running) {
          const i = seq++;
          await client.invokeWeak('kv.put', { key: `v/${i % 1000}`, value: i });
          done++;
        }
      };
      const start = performance.now();
      const workers = Array.from({ length: flags.outstanding }, worker);
      await new Promise((r) => setTimeout(r, flags.seconds * 1000));
      running = false;
      const counted = done;
      const elapsed = (performance.now() - start) / 1000;
      await Promise.all(workers);
      return counted / elapsed;
    };
    log('warm-up');
    await round();
    const bare: number[] = [];
    const watched: number[] = [];
    for (let r = 1; r <= flags.rounds; r++) {
      const a = await round();
      bare.push(a);
      log(`round ${r}: no viewer ${a.toFixed(0)} ops/s`);
      const viewer = await attachViewer(cluster, 0);
      const b = await round();
      viewer.close();
      watched.push(b);
      log(
        `round ${r}: viewer ${b.toFixed(0)} ops/s (it received ${viewer.events} events; ${viewer.dropped} dropped for it)`,
      );
    }
    const m0 = median(bare);
    const m1 = median(watched);
    out.print(
      `replica 0 of 3 on one machine, ${flags.outstanding} weak ops in flight, ${flags.rounds} rounds of ${flags.seconds} s`,
    );
    out.print(
      `no viewer:   median ${m0.toFixed(0)} ops/s (${bare.map((x) => x.toFixed(0)).join(', ')})`,
    );
    out.print(
      `with viewer: median ${m1.toFixed(0)} ops/s (${watched.map((x) => x.toFixed(0)).join(', ')}): ${(m1 / m0).toFixed(2)}× without`,
    );
    client.close();
    out.save();
  } finally {
    await cluster.stop(2_000);
  }
}

await main();
