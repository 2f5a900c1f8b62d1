import { LocalCluster } from '@creek/server/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveBankPage } from '../src/bank/serve.js';
import type { ExampleCluster } from '../src/shared/cluster.js';
import { visualizerFor } from '../src/shared/visualizer.js';

/** The example pages link to the visualizer watching their cluster, when the example owns it. */
let local: LocalCluster;
beforeAll(async () => {
  local = await LocalCluster.start({ replicas: 3, logLevel: 'error' });
}, 60_000);
afterAll(async () => {
  await local?.stop(1_000);
});

const own = (): ExampleCluster => ({
  urls: local.urls,
  token: local.token,
  local,
  identity: null,
  signIn: null,
  close: async () => undefined,
});

describe('the examples and the visualizer', () => {
  it('starts a visualizer on a cluster the example started, and the page links to it', async () => {
    const viz = await visualizerFor(own());
    expect(viz).not.toBeNull();
    try {
      const html = await (await fetch(viz!.url)).text();
      expect(html).toMatch(/id="live-config"/);
      const page = await serveBankPage({
        urls: local.urls,
        token: local.token,
        visualizer: viz!.url,
      });
      try {
        const body = await (await fetch(page.url)).text();
        expect(body).toContain(
          `<a href="${viz!.url}" target="_blank" rel="noopener">the Creek visualizer</a>`,
        );
      } finally {
        await page.close();
      }
    } finally {
      viz?.close();
    }
  });

  it('starts none for a cluster given by URL (its admin token is the operator’s), and the page has no link', async () => {
    expect(await visualizerFor({ ...own(), local: null })).toBeNull();
    const page = await serveBankPage({ urls: local.urls, token: local.token });
    try {
      expect(await (await fetch(page.url)).text()).not.toContain('Creek visualizer');
    } finally {
      await page.close();
    }
  });
});
