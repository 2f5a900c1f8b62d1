import { afterAll, beforeAll, expect, it } from 'vitest';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { RawClient, within } from './cluster-harness.js';

/**
 * Op ids are the client's own: two clients without a session that pick the same op id each get
 * their own op run and their own result (they once shared one namespace per replica, so the second
 * got the first one's `kv.cas` outcome, value included, and its op never ran).
 */
let cluster: LocalCluster;
beforeAll(async () => {
  cluster = await LocalCluster.start({ replicas: 1, logLevel: 'silent' });
}, 60_000);
afterAll(() => cluster.stop(1_000));

it('scopes op ids of clients without a session to their connection', async () => {
  const alice = await RawClient.connect(cluster.url(0), cluster.token);
  const mallory = await RawClient.connect(cluster.url(0), cluster.token);
  const a = alice.invoke('kv.put', { key: 'alice', value: 'alice-secret' }, 'strong', 'op-1');
  await within(a.done, 10_000, "alice's op");
  const m = mallory.invoke('kv.increment', { key: 'mallory' }, 'strong', 'op-1');
  await within(m.done, 10_000, "mallory's op");
  expect(JSON.stringify(m.views.frames)).not.toContain('alice-secret');
  expect(m.views.frames.at(-1)).toMatchObject({ t: 'view', outcome: { ok: true, value: 1 } });
  // The same id again on one connection is a retry: answered, not applied twice.
  const again = mallory.invoke('kv.increment', { key: 'mallory' }, 'strong', 'op-1');
  await within(again.done, 10_000, 'the retry');
  const read = mallory.invoke('kv.get', { key: 'mallory' }, 'strong');
  await within(read.done, 10_000, 'the read');
  expect(read.views.frames.at(-1)).toMatchObject({ outcome: { ok: true, value: 1 } });
  alice.close();
  mallory.close();
});
