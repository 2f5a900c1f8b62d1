/**
 * An open-loop load for the liveness benchmarks (bench:freeze, bench:faults): `rate` ops per
 * second spread over the clients in turn, a share `strong` of them strong kv.increment, the rest
 * weak kv.put, over `keys` keys, from a fixed pseudo-random sequence. Ops are issued on schedule
 * whether or not earlier ones were answered (a stalled replica does not slow the offered load).
 */
import { performance } from 'node:perf_hooks';
import { connect, type CreekClient } from '@creek/client';
import type { LocalCluster } from '@creek/server/node';

export interface LoadShape {
  readonly rate: number;
  readonly strong: number;
  readonly keys: number;
}

export interface RunningLoad {
  stop(): void;
  /** Per client, when each of its strong ops succeeded (performance.now()). */
  readonly strongDone: number[][];
}

/**
 * One SDK client per replica, client i connected to replica i first and failing over to the
 * others in turn: each replica has clients of its own to lose when it is frozen or cut off.
 */
export function clientsOnEachReplica(cluster: LocalCluster): CreekClient[] {
  return cluster.urls.map((_, i) =>
    connect({
      urls: [...cluster.urls.slice(i), ...cluster.urls.slice(0, i)],
      token: cluster.token,
      // The load stays spread over the replicas as placed, not drawn to the one probes favour.
      nearest: false,
    }),
  );
}

export function startLoad(clients: readonly CreekClient[], shape: LoadShape): RunningLoad {
  const strongDone = clients.map(() => [] as number[]);
  const t0 = performance.now();
  let issued = 0;
  let stopped = false;
  let seed = 1;
  const random = (): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const tick = (): void => {
    if (stopped) return;
    const due = Math.floor(((performance.now() - t0) / 1000) * shape.rate) + 1;
    while (issued < due) {
      const c = issued++ % clients.length;
      const key = `k/${Math.floor(random() * shape.keys)}`;
      if (random() < shape.strong)
        clients[c]!.invokeStrong('kv.increment', { key }, { timeoutMs: 120_000 }).then(
          () => strongDone[c]!.push(performance.now()),
          () => undefined,
        );
      else
        clients[c]!.invokeWeak('kv.put', { key, value: issued }, { timeoutMs: 120_000 }).catch(
          () => undefined,
        );
    }
    setTimeout(tick, 2);
  };
  tick();
  return {
    stop: () => {
      stopped = true;
    },
    strongDone,
  };
}

/**
 * Per client, the longest stretch in [from, to] without a successful strong op: from `from` to
 * its first success, between two, and from its last to `to`.
 */
export function longestStrongGaps(strongDone: number[][], from: number, to: number): number[] {
  return strongDone.map((times) => {
    let last = from;
    let worst = 0;
    for (const t of times.filter((x) => x >= from && x <= to).sort((a, b) => a - b)) {
      worst = Math.max(worst, t - last);
      last = t;
    }
    return Math.max(worst, to - last);
  });
}
