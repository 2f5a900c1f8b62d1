import { createHmac } from 'node:crypto';
import { LocalCluster } from '@creek/server/node';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, Unauthorized, Unavailable } from '../src/index.js';
import { cutOffHelpers } from './cut-off-cluster.js';

/**
 * Context tokens against real replicas: a client writes through replica 0 while replica 2 is cut
 * off from the others; a second client on replica 2 given the first's token is served only once
 * replica 2 has the write, and reads it; a third without the token reads the old state. Forged,
 * foreign, malformed and oversized tokens are refused with errors that say so. Clients keep to
 * their replica (`nearest: false`, `discover: false`): the test names where each one reads.
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

describe('context tokens across clients', () => {
  it('a client started after another’s token reads its write; one without it may not', async () => {
    const writer = on(0);
    await writer.invokeWeak('kv.get', { key: 'warm-up' });
    await cut(true);
    expect(await writer.invokeWeak('kv.put', { key: 'profile', value: 'phone' })).toBe(null);
    const token = await writer.context();
    expect(token).toMatch(/^ct1\.[0-9-]*\.[A-Za-z0-9_-]{22}$/);
    expect(token.length).toBeLessThan(60);

    // Replica 2 has not got the write: a client without the token reads the old state there.
    const plain = on(2);
    expect(await plain.invokeWeak('kv.get', { key: 'profile' })).toBe(null);
    expect(plain.replica()).toBe(2);

    // With the token, replica 2 holds the client back until it has the write.
    const reader = on(2, token);
    const read = reader.invokeWeak('kv.get', { key: 'profile' });
    let answered = false;
    void read.then(() => (answered = true));
    // The other client's read there is answered meanwhile: replica 2 is serving, just behind.
    expect(await plain.invokeWeak('kv.get', { key: 'still-behind' })).toBe(null);
    expect(answered).toBe(false);
    await cut(false);
    expect(await read).toBe('phone');
    expect(reader.replica()).toBe(2);
    // Its session goes on after the token: later reads see the write too.
    expect(await reader.invokeWeak('kv.get', { key: 'profile' })).toBe('phone');
  });

  it('a live client goes on after another’s token: after() waits for its write, then reads it', async () => {
    const writer = on(0);
    await writer.invokeWeak('kv.get', { key: 'warm-up' });
    const reader = on(2);
    expect(await reader.invokeWeak('kv.get', { key: 'cart' })).toBe(null);
    await cut(true);
    expect(await writer.invokeWeak('kv.put', { key: 'cart', value: 'shoes' })).toBe(null);
    const token = await writer.context();
    let resolved = false;
    const after = reader.after(token).then((t) => ((resolved = true), t));
    // Replica 2 serves the reader meanwhile, without the write: it is behind, not down.
    expect(await reader.invokeWeak('kv.get', { key: 'cart' })).toBe(null);
    expect(resolved).toBe(false);
    await cut(false);
    const both = await after;
    expect(both).toMatch(/^ct1\./);
    expect(await reader.invokeWeak('kv.get', { key: 'cart' })).toBe('shoes');
    expect(reader.replica()).toBe(2);
    // A token naming ops that do not exist: refused as Unavailable after the replica's wait.
    const counts = token
      .split('.')[1]!
      .split('-')
      .map((n) => Number(n) + 1_000);
    const none = `ct1.${counts.join('-')}.${'A'.repeat(22)}`;
    await expect(reader.after(none)).rejects.toBeInstanceOf(Unavailable);
    await expect(reader.after('not a token')).rejects.toThrow(/client\.after: this is not/);
    await expect(reader.after(`ct1.${'1-'.repeat(700)}1.${'a'.repeat(22)}`)).rejects.toThrow(
      /at most 1200 characters/,
    );
    await expect(reader.after(42 as unknown as string)).rejects.toThrow(/a string, not number/);
    // The reader is still served, after all that.
    expect(await reader.invokeWeak('kv.get', { key: 'cart' })).toBe('shoes');
  });

  it('refuses a token altered, or signed by another cluster, with Unauthorized', async () => {
    const token = await on(0).context();
    const [prefix, counts, mac] = token.split('.') as [string, string, string];
    // One more op of the last replica than the token's replica signed for.
    const more = counts.split('-').map(Number);
    more[more.length - 1] = (more.at(-1) ?? 0) + 1;
    const altered = `${prefix}.${more.join('-')}.${mac}`;
    const otherPayload = `${prefix}.${counts}`;
    // Well formed, signed under another key: as another cluster's replica would sign it.
    const otherMac = createHmac('sha256', 'another cluster')
      .update(otherPayload)
      .digest('base64url');
    const foreign = `${otherPayload}.${otherMac.slice(0, 22)}`;
    for (const bad of [altered, foreign]) {
      const c = on(1, bad);
      const err = await c.invokeWeak('kv.get', { key: 'profile' }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(Unauthorized);
      expect((err as Error).message).toMatch(/not signed by this cluster/);
    }
  });

  it('refuses a malformed or oversized token at connect, before anything is sent', () => {
    const make = (after: unknown) => () =>
      connect({ urls: cluster.urls, token: cluster.token, after: after as string });
    expect(make('not a token')).toThrow(/connect: after: this is not a context token/);
    expect(make(`ct1.${'1-'.repeat(700)}1.${'a'.repeat(22)}`)).toThrow(/at most 1200 characters/);
    expect(make(`ct1.${Array(65).fill(1).join('-')}.${'a'.repeat(22)}`)).toThrow(
      /at most 64 counts/,
    );
    expect(make('ct1.01.aaaaaaaaaaaaaaaaaaaaaa')).toThrow(/without leading zeros/);
    expect(make(42)).toThrow(/a context token is a string, not number/);
  });

  it('refuses oversized, forged and out-of-order context frames from a plain WebSocket', async () => {
    /** Sends `sent` on a new connection; the frames the replica answers until its first error. */
    const exchange = async (...sent: object[]): Promise<unknown[]> => {
      const ws = new WebSocket(cluster.urls[0]!);
      const frames: unknown[] = [];
      const refused = new Promise<void>((r) => {
        ws.on('message', (d) => {
          const f = JSON.parse(String(d)) as { t?: string };
          frames.push(f);
          if (f.t === 'error') r();
        });
        ws.on('close', () => r());
      });
      await new Promise((r) => ws.on('open', r));
      for (const f of sent) ws.send(JSON.stringify(f));
      await refused;
      ws.close();
      return frames;
    };
    const hello = (extra: object = {}) => ({
      t: 'hello',
      version: 2,
      token: cluster.token,
      ...extra,
    });
    const error = (code: string, message?: RegExp) =>
      expect.objectContaining({
        t: 'error',
        code,
        ...(message === undefined ? {} : { message: expect.stringMatching(message) }),
      });
    expect(
      await exchange(hello({ after: `ct1.${'9'.repeat(1300)}.${'a'.repeat(22)}` })),
    ).toContainEqual(error('bad-frame'));
    expect(await exchange(hello({ after: `ct1.5-5-5.${'a'.repeat(22)}` }))).toContainEqual(
      error('unauthorized', /not signed by this cluster/),
    );
    expect(await exchange(hello({ after: 'ct1.5.not-a-mac' }))).toContainEqual(
      error('unauthorized', /this is not a context token/),
    );
    // A request before the welcome, and malformed requests after it.
    expect(await exchange({ t: 'context', n: 1 })).toContainEqual(
      error('out-of-order', /before asking for a context token/),
    );
    expect(await exchange(hello(), { t: 'context', n: -1 })).toContainEqual(error('bad-frame'));
    expect(
      await exchange(hello(), { t: 'context', n: 1, seen: Array.from({ length: 65 }, () => 1) }),
    ).toContainEqual(error('bad-frame'));
    // Later incarnations' counts: an origin of a first incarnation, too many, a negative count.
    const tooMany = Array.from({ length: 65 }, (_, i) => [256 + i, 1]);
    for (const seenLater of [[[3, 1]], tooMany, [[257, -1]], [[257]], 'x'])
      expect(await exchange(hello({ seenLater }))).toContainEqual(error('bad-frame'));
    expect(
      await exchange(hello(), { t: 'context', n: 1, seenLater: [[2 ** 31, 1]] }),
    ).toContainEqual(error('bad-frame'));
  });
});
