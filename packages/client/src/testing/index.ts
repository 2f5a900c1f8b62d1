/**
 * Testing an app's UI logic under corrections: a whole Creek cluster in this process (the real
 * replica code, as `@creek/client/memory`) whose replicas' clocks disagree and whose messages take
 * varying times, both drawn from a seed. Concurrent ops at different replicas are then ordered
 * otherwise than they were invoked, and tentative answers get corrected: the situations an app's
 * views must handle, in the app's own tests. Needs `@creek/replica` (installed beside the client).
 *
 * The seed decides the clocks' skews and the stream of delays; the event loop decides which
 * message a delay goes to, so a seed makes corrections likely, not one exact interleaving. Run a
 * test over several seeds.
 *
 * @module @creek/client/testing
 */
import { CreekClient } from '../client.js';
import { MemoryBinding } from '../memory/memory-binding.js';
import { MemoryCluster } from '../memory/memory-cluster.js';

export interface AdversarialOptions<A> {
  /** The app every replica runs (`defineApp(...)`). */
  readonly app: A;
  /** Decides the clocks' skews and the messages' delays: an integer. */
  readonly seed: number;
  /** Replicas, 1-15; default 3. */
  readonly replicas?: number;
  /** Each message between replicas takes 0 to this many ms, drawn from the seed; default 30. */
  readonly maxDelayMs?: number;
  /** Each replica's clock is off by up to this many ms either way, drawn from the seed; default 50. */
  readonly maxSkewMs?: number;
}

export interface AdversarialCluster<A> {
  readonly cluster: MemoryCluster;
  /** One client per replica: `clients[i]` invokes at replica i. */
  readonly clients: readonly CreekClient<A>[];
  /** What the seed drew: how far each replica's clock is ahead (negative: behind), in ms. */
  readonly skewMs: readonly number[];
  /** Another client at replica `replica` (a second user there). */
  client(replica: number): CreekClient<A>;
  /** Closes the clients and the cluster: ops still waiting end with an error. */
  close(): void;
}

/** A small seeded generator (mulberry32): enough to draw delays, and the same on every platform. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function check(name: string, value: number, max: number, integer: boolean): void {
  if (!Number.isFinite(value) || value < 0 || value > max || (integer && !Number.isInteger(value)))
    throw new RangeError(
      `adversarialCluster: ${name} must be ${integer ? 'an integer' : 'a number'} from 0 to ${max}, not ${String(value)}`,
    );
}

/**
 * A cluster for testing an app under corrections, with a client at each replica.
 *
 * ```ts
 * const { clients, close } = adversarialCluster({ app, seed: 7 });
 * const [a, b] = [clients[0]!.invoke('seat.take', {}), clients[1]!.invoke('seat.take', {})];
 * // Both may show seat 1 tentatively; the final answers differ, and one view is corrected.
 * close();
 * ```
 */
export function adversarialCluster<A>(options: AdversarialOptions<A>): AdversarialCluster<A> {
  const { seed, replicas = 3, maxDelayMs = 30, maxSkewMs = 50 } = options;
  if (!Number.isSafeInteger(seed))
    throw new RangeError(`adversarialCluster: seed must be an integer, not ${String(seed)}`);
  check('replicas', replicas, 15, true);
  if (replicas < 1) throw new RangeError('adversarialCluster: replicas must be from 1 to 15');
  check('maxDelayMs', maxDelayMs, 10_000, false);
  check('maxSkewMs', maxSkewMs, 60_000, false);
  const skews = generator(seed);
  const skewMs = Array.from({ length: replicas }, () => Math.round((skews() * 2 - 1) * maxSkewMs));
  // A stream of its own, so that the skews do not depend on how many messages were sent.
  const delays = generator(seed ^ 0x5bd1e995);
  const cluster = new MemoryCluster({
    app: options.app,
    replicas,
    clockSkewMs: skewMs,
    delayMs: () => delays() * maxDelayMs,
  });
  const made: CreekClient<A>[] = [];
  const client = (replica: number): CreekClient<A> => {
    if (!Number.isInteger(replica) || replica < 0 || replica >= replicas)
      throw new RangeError(`adversarialCluster: no replica ${replica} of ${replicas}`);
    const c = new CreekClient<A>(new MemoryBinding(cluster, replica), { app: options.app });
    made.push(c);
    return c;
  };
  const clients = Array.from({ length: replicas }, (_, i) => client(i));
  return {
    cluster,
    clients,
    skewMs,
    client,
    close: () => {
      for (const c of made) void c.close();
      cluster.close();
    },
  };
}
