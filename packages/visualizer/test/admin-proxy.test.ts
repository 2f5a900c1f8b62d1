import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveVisualizer, type ServedVisualizer } from '../src/serve.js';

/** The server's /api/admin: only the page's actions, only its replicas, only POST. */
let live: ServedVisualizer;
let plain: ServedVisualizer;
beforeAll(async () => {
  live = await serveVisualizer({
    // Nothing listens on port 9: a forwarded action finds no replica.
    live: { urls: ['ws://127.0.0.1:9/client'], token: null, adminToken: 'a'.repeat(48) },
  });
  plain = await serveVisualizer();
});
afterAll(async () => {
  await live.close();
  await plain.close();
});

const post = async (s: ServedVisualizer, query: string) => {
  const r = await fetch(`${s.url}api/admin${query}`, { method: 'POST' });
  return { status: r.status, body: (await r.json()) as { error?: string } };
};

describe('the admin proxy', () => {
  it('refuses an unknown replica, an unknown action and a GET', async () => {
    expect(await post(live, '?replica=3&action=pause')).toMatchObject({
      status: 400,
      body: { error: 'replica must be 0 to 0' },
    });
    expect(await post(live, '?replica=0x0&action=pause')).toMatchObject({ status: 400 });
    expect((await post(live, '?replica=0&action=shutdown')).body.error).toMatch(
      /action must be one of block, unblock, pause, resume, delay/,
    );
    expect((await fetch(`${live.url}api/admin?replica=0&action=pause`)).status).toBe(405);
  });

  it('says when the replica does not answer, and when no cluster is watched', async () => {
    const down = await post(live, '?replica=0&action=pause');
    expect(down.status).toBe(502);
    expect(down.body.error).toMatch(/replica 0 did not answer/);
    expect(await post(plain, '?replica=0&action=pause')).toMatchObject({
      status: 404,
      body: { error: 'this visualizer watches no cluster' },
    });
  });

  it('hands the page the cluster inside it, not in a URL', async () => {
    const html = await (await fetch(live.url)).text();
    expect(html).toMatch(/<script type="application\/json" id="live-config">/);
    expect(html).toMatch(/"events":"ws:\/\/127.0.0.1:9\/events"/);
    expect(await (await fetch(plain.url)).text()).not.toMatch(/live-config/);
  });
});
