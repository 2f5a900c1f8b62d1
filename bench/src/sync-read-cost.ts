/**
 * What a synchronous snapshot read costs a worker thread that asks the main thread for it: the
 * design question of the worker-thread executor (`tx.get` is synchronous, the versions live on the
 * main thread). Measures, in one run:
 *
 *  - `direct`: the read on the main thread itself (a Map lookup plus the JSON copy a worker would
 *    receive), the floor;
 *  - `atomics`: a worker posts the request to the main thread and blocks in `Atomics.wait` on a
 *    SharedArrayBuffer; the main thread's `message` handler writes the JSON answer into the
 *    buffer and `Atomics.notify`s (the `synckit` pattern). Reported as µs per read in the worker
 *    and the process's CPU per read (both threads; process.cpuUsage counts every thread).
 *
 *   npm run bench:sync-read [-- --reads 50000 --rounds 3]
 *
 * Values are TPC-C customer-sized rows (~200 bytes of JSON).
 */
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { flagPairs } from './cli-flags.js';
import { median } from './stats.js';
import { recordResults } from './results.js';

/** The report: stdout, and the dated record in bench/results/. */
const out = recordResults('sync-read', 'text');

interface Flags {
  reads: number;
  rounds: number;
}
const USAGE = 'npm run bench:sync-read [-- --reads 50000 --rounds 3]';
const KEYS = 1000;

function row(i: number): unknown {
  return {
    c_id: i,
    c_first: `first${i}`,
    c_middle: 'OE',
    c_last: 'BARBARABLE',
    c_credit: 'GC',
    c_credit_lim: 50000,
    c_discount: 0.1234,
    c_balance: -10 - i,
    c_ytd_payment: 10,
    c_payment_cnt: 1,
    c_delivery_cnt: 0,
    c_phone: '0123456789012345',
    c_since: 1_700_000_000_000,
  };
}

interface Request {
  readonly key: string;
}

async function main(flags: Flags): Promise<void> {
  const store = new Map(Array.from({ length: KEYS }, (_, i) => [`k${i}`, row(i)]));

  const direct: number[] = [];
  const atomics: number[] = [];
  const cpuPerRead: number[] = [];
  for (let round = 1; round <= flags.rounds; round++) {
    // direct: the same work on one thread.
    let sink = 0;
    const t0 = performance.now();
    for (let i = 0; i < flags.reads; i++) {
      const v = JSON.parse(JSON.stringify(store.get(`k${i % KEYS}`) ?? null)) as { c_id: number };
      sink += v.c_id;
    }
    direct.push(((performance.now() - t0) * 1000) / flags.reads);
    if (sink < 0) console.log(sink);

    // atomics: a worker asks, the main thread answers.
    const sab = new SharedArrayBuffer(8 + 65_536);
    const ctl = new Int32Array(sab, 0, 2);
    const data = new Uint8Array(sab, 8);
    const enc = new TextEncoder();
    const worker = new Worker(WORKER, {
      eval: true,
      workerData: { sab, reads: flags.reads, keys: KEYS },
    });
    const cpu0 = process.cpuUsage();
    const perRead = await new Promise<number>((resolve, reject) => {
      worker.on('error', reject);
      worker.on('message', (m: Request | { done: number }) => {
        if ('done' in m) {
          resolve(m.done);
          return;
        }
        const written = enc.encodeInto(JSON.stringify(store.get(m.key) ?? null), data).written;
        Atomics.store(ctl, 1, written);
        Atomics.store(ctl, 0, 1);
        Atomics.notify(ctl, 0);
      });
    });
    const cpu = process.cpuUsage(cpu0);
    await worker.terminate();
    atomics.push(perRead);
    cpuPerRead.push((cpu.user + cpu.system) / (flags.reads * 1.04)); // the warm-up reads too, and the worker start
    process.stderr.write(
      `bench:sync-read: round ${round}/${flags.rounds}: direct ${direct.at(-1)!.toFixed(2)} µs, atomics ${perRead.toFixed(2)} µs per read\n`,
    );
  }
  out.print(`synchronous reads, ${flags.rounds} rounds of ${flags.reads} (medians)`);
  out.print(`  direct on the main thread:      ${median(direct).toFixed(2)} µs per read`);
  out.print(
    `  worker -> main, Atomics.wait:   ${median(atomics).toFixed(2)} µs per read in the worker, ${median(cpuPerRead).toFixed(2)} µs of CPU per read (both threads)`,
  );
  out.print(`  ratio atomics/direct:           ${(median(atomics) / median(direct)).toFixed(1)}×`);
  out.save();
}

/**
 * The worker's side, as plain JavaScript evaluated in the worker (no TypeScript loader there): it
 * reads synchronously `reads` times after a 4 % warm-up and posts the µs per read.
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { sab, reads, keys } = workerData;
const ctl = new Int32Array(sab, 0, 2);
const data = new Uint8Array(sab, 8);
const dec = new TextDecoder();
const read = (key) => {
  Atomics.store(ctl, 0, 0);
  parentPort.postMessage({ key });
  Atomics.wait(ctl, 0, 0);
  // TextDecoder refuses views of shared memory: copy out first.
  return JSON.parse(dec.decode(data.slice(0, Atomics.load(ctl, 1))));
};
const warm = Math.ceil(reads * 0.04);
for (let i = 0; i < warm; i++) read('k' + (i % keys));
const t0 = performance.now();
for (let i = 0; i < reads; i++) read('k' + (i % keys));
parentPort.postMessage({ done: ((performance.now() - t0) * 1000) / reads });
`;

function parse(argv: readonly string[]): Flags {
  const f: Flags = { reads: 50_000, rounds: 3 };
  const fail = (message: string): never => {
    console.error(`bench:sync-read: ${message}`);
    process.exit(2);
  };
  for (const [name, value] of flagPairs(
    argv,
    USAGE,
    (n) => n === 'reads' || n === 'rounds',
    fail,
  )) {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) fail(`--${name} must be a positive integer`);
    f[name as keyof Flags] = n;
  }
  return f;
}

await main(parse(process.argv.slice(2)));
