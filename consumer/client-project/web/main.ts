// The browser page: @creek/client bundled by Vite, talking to the cluster over the browser's own
// WebSocket. The cluster's URLs and token come in the page's query string. The app comes in as a
// type alone, as docs/getting-started.md says to: none of its ops' code is in the bundle (the
// consumer test checks), and the replica checks the arguments.
import { connect } from '@creek/client';
import type app from '../app.js';

const out = document.getElementById('out') as HTMLPreElement;
const query = new URLSearchParams(location.search);
const urls = (query.get('urls') ?? '').split(',');
const token = query.get('token') ?? '';

async function run(): Promise<Record<string, unknown>> {
  const creek = connect<typeof app>({ urls, token });
  const views: string[] = [];
  const final = await creek.invoke('counter.add', { name: 'page', by: 7 }).setCallbacks({
    onUpdate: (_, view) => views.push(`${view.level}:${String(view.value)}`),
    onFinal: (_, view) => views.push(`${view.level}:${String(view.value)}`),
  });
  const read = await creek.invokeStrong('counter.get', { name: 'page' });
  creek.close();
  return { final, read, views, hasWebSocket: typeof WebSocket === 'function' };
}

run().then(
  (result) => {
    out.textContent = JSON.stringify(result);
    out.dataset['done'] = 'ok';
  },
  (error: unknown) => {
    out.textContent = String(error);
    out.dataset['done'] = 'error';
  },
);
