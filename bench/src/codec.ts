/**
 * Benchmark of the wire codec: encode + decode of typical frames, Zod validation included.
 *
 *   npx tsx bench/src/codec.ts [-- --ms M --trials T]
 *
 * One op = encodeFrame(frame) then decode*(…) with its size check, parse and schema validation —
 * what a frame costs its sender plus its receiver. Frames: a client invoke with small args, a view
 * with a small result, a gossip push of 1 and of 32 Reqs, a Paxos accept with a batch of 1 and of
 * 256 ids. Each trial runs each frame for about M ms; the median over T trials is reported, the
 * codecs interleaved trial by trial. "JSON" is the codec as it is (string in, string out);
 * "JSON bytes" adds the UTF-8 encoding and decoding that a WebSocket does anyway, so that it
 * compares like for like with a binary codec. bytes/frame is the UTF-8 size on the wire.
 *
 * JSON versus msgpackr, measured once and not kept: msgpackr is not a dependency, so the
 * comparison ran from a throwaway script outside the repository that imports this file's frames
 * and harness (`runBench`, `CASES`, `jsonCodecs`) and adds two msgpackr 2.1.3 codecs, with its
 * native extension: plain msgpack maps (`useRecords: false`) and msgpackr's record extension
 * (`useRecords: true`; structures inline in each message, so still stateless). Their decode does
 * what decodeWith does: byte-size check, unpack in a try, the same Zod schema. Node 20.20, AMD
 * EPYC (2 vCPUs, shared), 5 trials of 200 ms, median; ratios msgpackr / JSON:
 *
 *                            ops/s vs JSON    ops/s vs JSON bytes   bytes/frame
 *   frame                    maps   records   maps   records        maps   records   (JSON)
 *   invoke, small args       1.03   0.83      1.29   1.05           0.78   0.79        116
 *   view, small result       1.03   0.75      1.31   0.95           0.76   0.79        157
 *   gossip push, 1 Req       0.97   0.80      1.09   0.90           0.73   0.75        224
 *   gossip push, 32 Reqs     1.00   0.97      1.01   0.99           0.71   0.31       5838
 *   paxos accept, 1 id       1.02   0.66      1.28   0.83           0.78   0.81        129
 *   paxos accept, 256 ids    0.93   1.21      0.95   1.24           0.78   0.17      14154
 *
 * (JSON itself in that run: 236k, 188k, 89k, 4.0k, 273k and 3.6k ops/s. Two more runs gave
 * ratios within ±0.15 of these.) Without Zod, encode + parse alone, msgpack maps / JSON was
 * 0.89–1.20, and Zod validation was 30–63% of JSON's end-to-end time, so a faster parser barely
 * shows. Finding: msgpackr is not clearly better — nowhere near 1.5x faster end to end (maps: at
 * most 1.03x over the codec as it is in this run, 1.18x in any run; 1.31x only against JSON that
 * also pays the UTF-8 conversion), and frames are 22–29% smaller as maps; the record extension
 * makes the large batches 3–6x smaller but small frames up to 1.5x slower. The codec stays JSON
 * (see packages/protocol/src/codec.ts).
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import {
  PROTOCOL_VERSION,
  decodeClientFrame,
  decodePeerFrame,
  decodeServerFrame,
  encodeFrame,
} from '@creek/protocol';
import type { ClientFrame, Decoded, PeerFrame, ServerFrame, WireReq } from '@creek/protocol';
import { median } from './stats.js';

export type Side = 'client' | 'server' | 'peer';

export interface BenchCase {
  name: string;
  /** Which decoder (and schema) receives it. */
  side: Side;
  frame: ClientFrame | ServerFrame | PeerFrame;
}

export interface Codec {
  name: string;
  encode(frame: unknown): string | Uint8Array;
  /** Size check, parse and schema validation, as the receiver does it. */
  decode(side: Side, data: string | Uint8Array): Decoded<unknown>;
}

const req = (eventNo: number): WireReq => ({
  ts: 1_700_000_000_000 + eventNo,
  id: { replica: 1, eventNo },
  op: 'cart.add',
  args: { cartId: `u-${eventNo % 97}`, sku: `SKU-${9000 + eventNo}`, qty: 1 + (eventNo % 3) },
  strong: eventNo % 10 === 0,
  causalCtx: { '0': [1200 + eventNo], '1': [eventNo - 1], '2': [877, 879] },
});
const cast = (i: number) => ({
  id: { replica: i % 3, eventNo: 10_000 + i },
  prevStrong: 4_000 + Math.floor(i / 8),
});

export const CASES: BenchCase[] = [
  {
    name: 'invoke, small args',
    side: 'client',
    frame: {
      t: 'invoke',
      opId: 'c-4f1e:42',
      op: 'cart.add',
      args: { cartId: 'u-17', sku: 'SKU-9931', qty: 2 },
      level: 'strong',
    },
  },
  {
    name: 'view, small result',
    side: 'server',
    frame: {
      t: 'view',
      opId: 'c-4f1e:42',
      level: 'tentative',
      outcome: { ok: true, value: { items: 3, total: 5997, currency: 'EUR' } },
      id: { replica: 2, eventNo: 1041 },
    },
  },
  {
    name: 'gossip push, 1 Req',
    side: 'peer',
    frame: { t: 'gossip', msg: { kind: 'push', reqs: [req(5)] } },
  },
  {
    name: 'gossip push, 32 Reqs',
    side: 'peer',
    frame: {
      t: 'gossip',
      msg: { kind: 'push', reqs: Array.from({ length: 32 }, (_, i) => req(i + 1)) },
    },
  },
  {
    name: 'paxos accept, 1 id',
    side: 'peer',
    frame: { t: 'paxos', msg: { type: 'accept', ballot: 7, instance: 5120, value: [cast(0)] } },
  },
  {
    name: 'paxos accept, 256 ids',
    side: 'peer',
    frame: {
      t: 'paxos',
      msg: {
        type: 'accept',
        ballot: 7,
        instance: 5121,
        value: Array.from({ length: 256 }, (_, i) => cast(i)),
      },
    },
  },
];

const DECODERS: Record<Side, (data: unknown) => Decoded<unknown>> = {
  client: decodeClientFrame,
  server: decodeServerFrame,
  peer: decodePeerFrame,
};
const utf8 = new TextEncoder();

export const jsonCodecs: Codec[] = [
  { name: 'JSON', encode: encodeFrame, decode: (side, data) => DECODERS[side](data) },
  {
    name: 'JSON bytes',
    encode: (frame) => utf8.encode(encodeFrame(frame)),
    decode: (side, data) => DECODERS[side](data),
  },
];

export const wireBytes = (data: string | Uint8Array): number =>
  typeof data === 'string' ? Buffer.byteLength(data, 'utf8') : data.byteLength;

export interface BenchResult {
  caseName: string;
  codec: string;
  /** Median over the trials of encode+decode ops per second. */
  opsPerSec: number;
  bytes: number;
}

/** Round-trips once through every codec and fails loudly on any difference. */
function checkRoundTrip(c: BenchCase, codec: Codec): void {
  const r = codec.decode(c.side, codec.encode(c.frame));
  if (!r.ok || JSON.stringify(r.frame) !== JSON.stringify(c.frame)) {
    throw new Error(`${codec.name} does not round-trip ${c.name}: ${JSON.stringify(r)}`);
  }
}

/** Runs `iterations` encode+decode ops; returns seconds. */
function timeOps(c: BenchCase, codec: Codec, iterations: number): number {
  let sink = 0;
  const t0 = performance.now();
  for (let i = 0; i < iterations; i++) {
    const r = codec.decode(c.side, codec.encode(c.frame));
    if (r.ok) sink++;
  }
  const s = (performance.now() - t0) / 1000;
  if (sink !== iterations) throw new Error(`${codec.name}: ${c.name} failed to decode`);
  return s;
}

/** Iterations that take about `ms` milliseconds. */
function calibrate(c: BenchCase, codec: Codec, ms: number): number {
  let n = 16;
  for (;;) {
    const s = timeOps(c, codec, n);
    if (s * 1000 >= ms / 4) return Math.max(1, Math.round((n * ms) / (s * 1000)));
    n *= 4;
  }
}

export function runBench(codecs: Codec[], opts: { ms: number; trials: number }): BenchResult[] {
  const results: BenchResult[] = [];
  for (const c of CASES) {
    for (const codec of codecs) checkRoundTrip(c, codec);
    const iterations = codecs.map((codec) => calibrate(c, codec, opts.ms)); // also warms up
    const runs: number[][] = codecs.map(() => []);
    for (let t = 0; t < opts.trials; t++) {
      codecs.forEach((codec, k) => {
        runs[k]!.push(iterations[k]! / timeOps(c, codec, iterations[k]!));
      });
    }
    codecs.forEach((codec, k) => {
      results.push({
        caseName: c.name,
        codec: codec.name,
        opsPerSec: median(runs[k]!),
        bytes: wireBytes(codec.encode(c.frame)),
      });
    });
  }
  return results;
}

export function printResults(results: BenchResult[]): void {
  const rows = results.map((r) => [
    r.caseName,
    r.codec,
    Math.round(r.opsPerSec).toLocaleString('en-US'),
    String(r.bytes),
  ]);
  const head = ['frame', 'codec', 'ops/s (median)', 'bytes/frame'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i >= 2 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ');
  console.log(line(head));
  for (const row of rows) console.log(line(row));
}

function parseArgs(argv: string[]): { ms: number; trials: number } {
  const args = { ms: 200, trials: 5 };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const v = Number(argv[i + 1]);
    if ((flag === '--ms' || flag === '--trials') && Number.isInteger(v) && v > 0) {
      args[flag === '--ms' ? 'ms' : 'trials'] = v;
      i++;
    } else {
      console.error(`usage: npx tsx bench/src/codec.ts [--ms M] [--trials T]   (bad: ${flag})`);
      process.exit(2);
    }
  }
  return args;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = parseArgs(process.argv.slice(2));
  console.log(
    `codec benchmark: encode + decode with Zod validation, ${args.trials} trials of ~${args.ms} ms (median), node ${process.version}, protocol v${PROTOCOL_VERSION}`,
  );
  printResults(runBench(jsonCodecs, args));
}
