import { performance } from 'node:perf_hooks';
import type { CreekClient } from '@creek/client';

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
