import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '@creek/client';
import { DevIdentity } from '../../src/node/dev-identity.js';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { AuthClient } from './auth-client.js';

/**
 * A LocalCluster with its own dev identity provider: real replicas verify the tokens it mints,
 * as they would a real provider's, and refuse anonymous callers the ops that need a user.
 */
const APP = fileURLToPath(new URL('./fixtures/todo-auth-app.mjs', import.meta.url));

let cluster: LocalCluster;

beforeAll(async () => {
  cluster = await LocalCluster.start({ replicas: 3, app: APP, devIdentity: true }, 60_000);
}, 90_000);

afterAll(async () => {
  await cluster?.stop();
});

describe('a local cluster with the dev identity', () => {
  it('welcomes a client with a minted token as that user, and refuses anonymous calls', async () => {
    const identity = cluster.identity;
    expect(identity).toBeInstanceOf(DevIdentity);
    const alice = await AuthClient.open(cluster.url(0), {
      token: cluster.token,
      auth: (await identity!.mint('alice')).token,
    });
    expect(alice.welcome?.auth).toMatchObject({ user: 'alice' });
    expect(await alice.value('todos.add', { text: 'milk' })).toBe(0);
    const admin = await AuthClient.open(cluster.url(1), {
      token: cluster.token,
      auth: (await identity!.mint('admin')).token,
    });
    expect(await admin.value('whoami', {}, { level: 'weak' })).toEqual({
      id: 'admin',
      role: 'admin',
    });
    const anon = await AuthClient.open(cluster.url(2), { token: cluster.token });
    expect(anon.welcome?.auth).toEqual({ user: null });
    expect(await anon.value('todos.add', { text: 'x' })).toMatch(
      /^error: unauthorized: 'todos.add' needs a signed-in user/,
    );
    expect(await anon.value('kv.put', { key: 'k', value: 1 })).toMatch(/^error: unauthorized:/);
    for (const c of [alice, admin, anon]) c.close();
  });

  it('serves the SDK signed in with `auth`', async () => {
    const identity = cluster.identity!;
    const db = connect({
      urls: cluster.urls,
      token: cluster.token,
      auth: async () => (await identity.mint('bob')).token,
    });
    try {
      expect(await db.invokeStrong('todos.add', { text: 'bread' })).toBe(0);
      expect(await db.invokeStrong('todos.list', {})).toEqual([{ text: 'bread', by: 'bob' }]);
    } finally {
      db.close();
    }
  });
});
