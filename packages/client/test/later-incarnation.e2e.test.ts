import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { LocalCluster } from '@creek/server/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cutOffHelpers } from './cut-off-cluster.js';

/**
 * Session guarantees for the ops of a replica in a later incarnation, against real replicas: once
 * replica 0's data directory is wiped, it rejoins under origin 256 and numbers its ops there. A
 * client's write through it is covered by the client's context token (`origin:count` after the
 * counts by position), and a client started after that token at a replica cut off from the write
 * is held until the write arrives. Before seen vectors were keyed by origin, the token counted
 * replica ids' first incarnations only, and the second client read the old state at once.
 */
let cluster: LocalCluster;
const { on, cut, closeAll } = cutOffHelpers(() => cluster);

beforeAll(async () => {
  cluster = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
  await cluster.waitForLeader();
}, 60_000);

afterAll(async () => {
  closeAll();
  await cluster?.stop(1_000);
});

describe('a replica in its second incarnation', () => {
  it("has its ops covered by a client's context token, and a client after it waits for them", async () => {
    const first = on(0);
    expect(await first.invokeWeak('kv.put', { key: 'profile', value: 'phone' })).toBe(null);
    first.close();
    await cluster.converged();

    // Replica 0 loses its disk and comes back under a new incarnation.
    await cluster.killed(0);
    rmSync(join(cluster.dir, 'replica-0'), { recursive: true, force: true });
    cluster.startReplica(0);
    await cluster.until(
      async () => (await cluster.status(0))?.identity?.incarnation === 1,
      20_000,
      'replica 0 back in its second incarnation',
    );
    await cluster.converged();

    await cut(true);
    const writer = on(0);
    expect(await writer.invokeWeak('kv.put', { key: 'profile', value: 'laptop' })).toBe(null);
    const token = await writer.context();
    // Origin 256 (replica 0's second incarnation) is named after the counts by position.
    expect(token).toMatch(/^ct1\.[0-9-]*-256:[1-9][0-9]*\.[A-Za-z0-9_-]{22}$/);

    const plain = on(2);
    expect(await plain.invokeWeak('kv.get', { key: 'profile' })).toBe('phone');
    const reader = on(2, token);
    const read = reader.invokeWeak('kv.get', { key: 'profile' });
    let answered = false;
    void read.then(() => (answered = true));
    expect(await plain.invokeWeak('kv.get', { key: 'still-behind' })).toBe(null);
    expect(answered).toBe(false);
    await cut(false);
    expect(await read).toBe('laptop');
    expect(reader.replica()).toBe(2);
  });
});
