/**
 * A whole Creek cluster inside this process (the real replica code, no disk or sockets), for
 * application tests and demos. Needs `@creek/replica` (installed beside the client).
 *
 * @module @creek/client/memory
 */
import { CreekClient } from '../client.js';
import { MemoryBinding } from './memory-binding.js';
import { MemoryCluster, type MemoryClusterOptions } from './memory-cluster.js';

export { MemoryBinding, MemoryCluster, type MemoryClusterOptions };

/**
 * A client over a Creek cluster that lives in this process: for application tests and demos.
 *
 * ```ts
 * const { client, cluster } = connectInMemory({ app });
 * await client.invoke('kv.increment', { key: 'n' });
 * cluster.close();
 * ```
 */
export function connectInMemory<A>(options: MemoryClusterOptions<A> & { replica?: number }): {
  client: CreekClient<A>;
  cluster: MemoryCluster;
} {
  const cluster = new MemoryCluster(options);
  return {
    client: new CreekClient<A>(new MemoryBinding(cluster, options.replica ?? 0), {
      app: options.app,
    }),
    cluster,
  };
}
