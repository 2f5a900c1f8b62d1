import { LocalCluster } from '@creek/server/node';
import { describe, expect, it } from 'vitest';
import { connect } from '../src/client.js';
import { levelsOf } from './support.js';

/**
 * The `cached` level (Correctables §4.3's local cache) against real replicas: they list their
 * read-only ops, so a client caches them without the app. The rest is in cached-level.test.ts.
 */
describe('the cached level over the wire (read-only ops as the replica lists them)', () => {
  it('real replicas list their read-only ops, so a client without the app caches kv.get', async () => {
    const cluster = await LocalCluster.start({ replicas: 1, logLevel: 'error' });
    const creek = connect({ urls: cluster.urls, token: cluster.token });
    try {
      await creek.invokeStrong('kv.put', { key: 'k', value: 1 });
      await creek.invoke('kv.get', { key: 'k' });
      // The cached value first, the stable one last (a tentative one between, when it comes first).
      const levels = await levelsOf(creek.invoke('kv.get', { key: 'k' }));
      expect(levels[0]).toBe('cached');
      expect(levels.at(-1)).toBe('strong');
      // kv.put writes: never cached.
      expect(await levelsOf(creek.invoke('kv.put', { key: 'k', value: 2 }))).not.toContain(
        'cached',
      );
    } finally {
      creek.close();
      await cluster.stop(1_000);
    }
  });
});
