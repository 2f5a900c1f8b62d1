/**
 * What one GET /status costs on a large store: its size in bytes and the time to serve it, with
 * `--keys` keys of `--value-bytes` bytes each (default 10,000 × 1 KB).
 *
 *   npm run bench:status [-- --keys 10000 --value-bytes 1000 --requests 30]
 *
 * Starts a LocalCluster of 3 real replica processes, writes the keys through one client (weak
 * kv.put, 256 outstanding), waits until every replica holds them, then times `--requests`
 * sequential GETs of replica 0's /status (first byte to last, on a kept-alive connection) and
 * prints the body size and the median and p99 times. The first request is reported apart (it opens
 * the connection). Progress goes to stderr, the results to stdout.
 */
import { performance } from 'node:perf_hooks';
import { LocalCluster } from '@creek/server/node';
import WebSocket from 'ws';
import { flagPairs } from './cli-flags.js';
import { recordResults } from './results.js';

/** The report: stdout, and the dated record in bench/results/. */
const out = recordResults('status', 'text');

interface Flags {
  keys: number;
  valueBytes: number;
  requests: number;
}

const USAGE = 'npm run bench:status [-- --keys 10000 --value-bytes 1000 --requests 30]';

function parse(argv: readonly string[]): Flags {
  const f: Flags = { keys: 10_000, valueBytes: 1000, requests: 30 };
  const fail = (message: string): never => {
    console.error(`bench:status: ${message}`);
    process.exit(2);
  };
  const known = (name: string): boolean => ['keys', 'value-bytes', 'requests'].includes(name);
  for (const [name, value] of flagPairs(argv, USAGE, known, fail)) {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 3) fail(`--${name} must be an integer of at least 3`);
    if (name === 'keys') f.keys = n;
    else if (name === 'value-bytes') f.valueBytes = n;
    else f.requests = n;
  }
  return f;
}

/** Writes `keys` values through a bare protocol client, `window` outstanding at a time. */
async function fill(url: string, token: string, f: Flags, window = 256): Promise<void> {
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.once('error', reject);
    ws.once('open', () => ws.send(JSON.stringify({ t: 'hello', version: 1, token })));
    ws.once('message', () => resolve());
  });
  const value = 'v'.repeat(f.valueBytes - 2); // JSON-encoded: the quotes make up the size
  let sent = 0;
  let done = 0;
  await new Promise<void>((resolve, reject) => {
    const sendMore = (): void => {
      while (sent < f.keys && sent - done < window) {
        const i = sent++;
        ws.send(
          JSON.stringify({
            t: 'invoke',
            opId: `w${i}`,
            op: 'kv.put',
            args: { key: `key${i}`, value },
            level: 'weak',
          }),
        );
      }
    };
    ws.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as { t: string; message?: string };
      if (frame.t === 'error') return reject(new Error(frame.message));
      if (frame.t !== 'view') return;
      done++;
      if (done % 2000 === 0) process.stderr.write(`  wrote ${done} of ${f.keys}\n`);
      if (done === f.keys) resolve();
      else sendMore();
    });
    sendMore();
  });
  ws.close();
}

async function main(): Promise<void> {
  const f = parse(process.argv.slice(2));
  process.stderr.write(`bench:status: starting 3 replicas\n`);
  const cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
  try {
    process.stderr.write(`bench:status: writing ${f.keys} keys of ${f.valueBytes} bytes\n`);
    await fill(cluster.url(0), cluster.token, f);
    await cluster.converged(120_000);
    const url = `${cluster.httpUrl(0)}/status`;
    const headers = { authorization: `Bearer ${cluster.adminToken}` };
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < f.requests + 1; i++) {
      const t0 = performance.now();
      const body = await (await fetch(url, { headers })).arrayBuffer();
      times.push(performance.now() - t0);
      bytes = body.byteLength;
    }
    const first = times.shift()!;
    times.sort((a, b) => a - b);
    const q = (p: number): number =>
      times[Math.min(times.length - 1, Math.floor(p * times.length))]!;
    out.print(`/status with ${f.keys} keys × ${f.valueBytes} B on replica 0 (3 replicas)`);
    out.print(`  body: ${bytes} bytes`);
    out.print(`  first request: ${first.toFixed(2)} ms`);
    out.print(`  next ${f.requests}: median ${q(0.5).toFixed(2)} ms, p99 ${q(0.99).toFixed(2)} ms`);
    out.save();
  } finally {
    await cluster.stop(2_000);
  }
}

main().catch((err: unknown) => {
  console.error(`bench:status: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
