import { performance } from 'node:perf_hooks';
import type { CreekClient } from '@creek/client';
import { flagPairs } from './cli-flags.js';

/** The flags of a benchmark that fills a store of `keys` keys. */
export interface StoreFlags {
  keys: number;
  'value-bytes': number;
  'in-flight': number;
}

/**
 * `--keys N --value-bytes B --in-flight K` (defaults 100,000, 32 and 256), each a whole number in
 * its range; a mistake exits 2 with `bench` and the message.
 */
export function parseStoreFlags(bench: string, usage: string, argv: readonly string[]): StoreFlags {
  const f: StoreFlags = { keys: 100_000, 'value-bytes': 32, 'in-flight': 256 };
  const fail = (message: string): never => {
    console.error(`${bench}: ${message}`);
    process.exit(2);
  };
  for (const [name, raw] of flagPairs(argv, usage, (n) => n in f, fail)) {
    const n = Number(raw);
    const [lo, hi] =
      name === 'keys' ? [1, 5_000_000] : name === 'value-bytes' ? [0, 65_536] : [1, 4096];
    if (!Number.isInteger(n) || n < lo || n > hi)
      fail(`--${name} must be a whole number from ${lo} to ${hi}`);
    f[name as keyof StoreFlags] = n;
  }
  return f;
}

/**
 * Writes `count` keys (`key/0` …) with weak kv.put of `valueBytes`-byte values through every
 * client, `inFlight` ops outstanding each, and reports progress every 10,000 keys. The benchmarks
 * that need a store of a given size (bench:transfer, bench:replace) fill it with this.
 */
export async function writeKeys(
  clients: readonly CreekClient[],
  count: number,
  valueBytes: number,
  inFlight: number,
  log: (line: string) => void,
  value = 'x'.repeat(valueBytes),
): Promise<void> {
  let next = 0;
  let done = 0;
  const t0 = performance.now();
  await Promise.all(
    clients.map(async (client) => {
      const lane = async (): Promise<void> => {
        while (next < count) {
          const k = next++;
          await client.invokeWeak('kv.put', { key: `key/${k}`, value });
          if (++done % 10_000 === 0)
            log(
              `${done}/${count} keys written (${((performance.now() - t0) / 1000).toFixed(1)} s)`,
            );
        }
      };
      await Promise.all(Array.from({ length: inFlight }, lane));
    }),
  );
  log(`${count} keys written in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
