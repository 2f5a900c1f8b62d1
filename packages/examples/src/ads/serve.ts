import { fileURLToPath } from 'node:url';
import type { AdsPageConfig } from './page-config.js';
import { servePage, type ServedPage } from '../shared/page-server.js';

const ENTRY = fileURLToPath(new URL('./page.tsx', import.meta.url));

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
#status[data-state=corrected] { color: #1f5fa8; } #status[data-state=strong] { color: #1f7a3a; }
#status[data-state=withdrawn] { color: #b3261e; } #status[data-state=fetching] { color: #5a6270; } #status[data-state=error] { color: #b3261e; }
#log { font: 13px/1.4 ui-monospace, monospace; }
`;

/** Serves the ad-serving page for a cluster that runs the ads app and holds its data. */
export function serveAdsPage(
  config: AdsPageConfig,
  listen: { port?: number; host?: string; visualizer?: string } = {},
): Promise<ServedPage> {
  return servePage({
    title: 'Ads, at once',
    entry: ENTRY,
    config: { ...config },
    css: CSS,
    ...listen,
  });
}
