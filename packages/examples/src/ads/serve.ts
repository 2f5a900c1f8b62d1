import { fileURLToPath } from 'node:url';
import type { AdsPageConfig } from './page-config.js';
import { servePage, type ServedPage } from '../shared/page-server.js';

const ENTRY = fileURLToPath(new URL('./page.ts', import.meta.url));

const BODY = `
<h1>Ad serving with Correctables</h1>
<p>A user's profile references ads. <b>Fetch ads</b> reads the profile with <code>invoke</code>
and speculates on its preliminary view: the ads are fetched and shown at once, marked
<span class="preliminary">preliminary</span>, then marked <span class="confirmed">confirmed</span>
when the final view agrees, or <span class="withdrawn">withdrawn</span> and replaced by
<span class="corrected">corrected</span> ads when it does not (Correctables §4.2).
<b>Strong only</b> waits for the final profile before fetching anything.
<b>Re-target elsewhere</b> changes the user's ads with a weak write at another replica and fetches
at once: whether this fetch sees the change depends on where the write is ordered.</p>
<p id="setup"></p>
<p>
  <label>User <select id="user"></select></label>
  <button id="fetch">Fetch ads</button>
  <button id="fetch-strong">Strong only</button>
  <button id="retarget">Re-target elsewhere, then fetch</button>
</p>
<p id="status" data-state="loading">loading …</p>
<ol id="ads"></ol>
<h2>Timeline</h2>
<ol id="log"></ol>
`;

const CSS = `
#ads { list-style: none; padding: 0; }
.ad { border: 1px solid #ddd; border-left: 4px solid #999; border-radius: 4px; margin: .4rem 0; padding: .4rem .7rem; }
.ad p { margin: .2rem 0 0; }
.ad .marker { font-size: .75rem; text-transform: uppercase; margin-right: .6rem; }
.ad.preliminary { border-left-color: #c98a00; background: #fff8e6; }
.ad.confirmed, .ad.strong { border-left-color: #1f7a3a; }
.ad.corrected { border-left-color: #1f5fa8; }
.ad.withdrawn { border-left-color: #b3261e; opacity: .55; text-decoration: line-through; }
.preliminary { color: #8a6100; } .corrected { color: #1f5fa8; } .withdrawn { color: #b3261e; }
#status[data-state=preliminary] { color: #8a6100; } #status[data-state=confirmed] { color: #1f7a3a; }
#status[data-state=corrected] { color: #1f5fa8; } #status[data-state=error] { color: #b3261e; }
#log { font: 13px/1.4 ui-monospace, monospace; }
`;

/** Serves the ad-serving page for a cluster that runs the ads app and holds its data. */
export function serveAdsPage(
  config: AdsPageConfig,
  listen: { port?: number; host?: string; visualizer?: string } = {},
): Promise<ServedPage> {
  return servePage({
    title: 'Creek: ad serving',
    entry: ENTRY,
    config: { ...config },
    body: BODY,
    css: CSS,
    ...listen,
  });
}
