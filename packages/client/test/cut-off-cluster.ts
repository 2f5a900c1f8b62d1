import type { LocalCluster } from '@creek/server/node';
import { connect, type CreekClient } from '../src/index.js';

/**
 * Clients pinned to one replica of a real cluster (`nearest: false`, `discover: false`: a test
 * names where each one reads), and replica 2 cut off from the others and joined again, for the
 * context-token tests.
 */
export function cutOffHelpers(cluster: () => LocalCluster) {
  const clients: CreekClient[] = [];
  /** A client that only ever talks to replica `i`, optionally started after a token. */
  const on = (i: number, after?: string): CreekClient => {
    const c = connect({
      urls: [cluster().urls[i]!],
      token: cluster().token,
      nearest: false,
      discover: false,
      ...(after === undefined ? {} : { after }),
    });
    clients.push(c);
    return c;
  };
  /** Cuts replica 2 off from the others (both ways), or joins it again. */
  const cut = async (off: boolean): Promise<void> => {
    const action = off ? 'block' : 'unblock';
    await Promise.all([
      cluster().admin(2, action, { peer: 0 }),
      cluster().admin(2, action, { peer: 1 }),
      cluster().admin(0, action, { peer: 2 }),
      cluster().admin(1, action, { peer: 2 }),
    ]);
  };
  const closeAll = (): void => {
    for (const c of clients) c.close();
  };
  return { on, cut, closeAll };
}
