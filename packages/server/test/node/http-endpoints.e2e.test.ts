import { afterAll, beforeAll, expect, it } from 'vitest';
import { StateDigest } from '@creek/replica/core/state-digest.js';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { RawClient, within } from './cluster-harness.js';

/**
 * What each HTTP endpoint shows, and to whom (README, "HTTP endpoints"): /health and /ready are
 * open; /status and /metrics need the monitor or admin token; /status shows a fixed-size digest of
 * the state, never the state (it once returned every key and value to anyone).
 */
let cluster: LocalCluster;
beforeAll(async () => {
  cluster = await LocalCluster.start({ replicas: 3, logLevel: 'silent' });
}, 60_000);
afterAll(() => cluster.stop(1_000));

it('serves /status and /metrics only with a token', async () => {
  for (const path of ['/status', '/metrics']) {
    const none = await fetch(`${cluster.httpUrl(0)}${path}`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="creek"');
    expect(((await none.json()) as { error: string }).error).toMatch(/authorization: Bearer/);
    const wrong = await fetch(`${cluster.httpUrl(0)}${path}`, {
      headers: { authorization: `Bearer ${cluster.token}` }, // the client token is not enough
    });
    expect(wrong.status).toBe(401);
    expect((await cluster.monitor(0, path)).status).toBe(200);
  }
  for (const path of ['/health', '/ready']) {
    const open = await fetch(`${cluster.httpUrl(0)}${path}`);
    expect(open.status).toBe(200);
    expect(await open.json()).toMatchObject({ ok: true, replica: 0 });
  }
});

it('shows a fixed-size digest of the state, not the state', async () => {
  const sizeBefore = (await (await cluster.monitor(0, '/status')).text()).length;
  const c = await RawClient.connect(cluster.url(0), cluster.token);
  const secret = 'hunter2-do-not-show';
  const writes = [c.invoke('kv.put', { key: 'password', value: secret }, 'strong')];
  for (let i = 0; i < 100; i++)
    writes.push(c.invoke('kv.put', { key: `big${i}`, value: 'x'.repeat(1000) }, 'weak'));
  await within(Promise.all(writes.map((w) => w.done)), 20_000, 'the writes');
  c.close();
  const statuses = await cluster.converged();
  const text = await (await cluster.monitor(0, '/status')).text();
  expect(text).not.toContain(secret);
  expect(text).not.toContain('xxxxxxxx');
  // 100 kB more state, the same size of /status give or take its counters' digits.
  expect(Math.abs(text.length - sizeBefore)).toBeLessThan(300);
  const expected = StateDigest.of([
    ['password', secret],
    ...Array.from({ length: 100 }, (_, i): [string, string] => [`big${i}`, 'x'.repeat(1000)]),
  ]);
  for (const s of statuses) expect(s.digest).toBe(expected);
});

it('answers a WebSocket upgrade to another path with 404 and where clients connect', async () => {
  const { default: WebSocket } = await import('ws');
  const url = cluster.url(0).replace('/client', '/');
  const ws = new WebSocket(url);
  const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.once('open', () => reject(new Error('upgraded')));
  });
  expect(answer.status).toBe(404);
  expect(answer.body).toMatch(/clients connect to \/client/);
});
