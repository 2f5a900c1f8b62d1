import { afterAll, beforeAll, expect, it } from 'vitest';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { RawClient, within } from './cluster-harness.js';
import { frame, OP, rawUpgrade } from './raw-socket.js';

/**
 * Frames the WebSocket layer itself refuses end one connection, never the replica (issue: a 9-byte
 * frame of invalid UTF-8, or a frame above maxPayload, killed the process with an unhandled
 * 'error' event, and `creek dev` then stopped the whole cluster).
 */
let cluster: LocalCluster;
beforeAll(async () => {
  cluster = await LocalCluster.start({ replicas: 3, logLevel: 'silent' });
}, 60_000);
afterAll(() => cluster.stop(1_000));

const port = (i: number): number => cluster.basePort + i;

it.each(['/client', '/peer'])(
  'invalid UTF-8 and oversized frames on %s close that connection only',
  async (path) => {
    for (let i = 0; i < cluster.size; i++) {
      const utf8 = await rawUpgrade(port(i), path);
      expect(utf8.status).toContain('101');
      utf8.socket.write(frame(OP.text, Buffer.from([0xff, 0xfe, 0xfd])));
      await within(utf8.closed, 5_000, 'the connection to close');

      const big = await rawUpgrade(port(i), path);
      big.socket.write(frame(OP.binary, Buffer.alloc(16), { claimedLength: 64 << 20 }));
      await within(big.closed, 5_000, 'the connection to close');
    }
    // Every replica is still up and the cluster still orders strong ops.
    expect((await cluster.statuses()).every((s) => s !== null)).toBe(true);
    const c = await RawClient.connect(cluster.url(0), cluster.token);
    const op = c.invoke('kv.increment', { key: `edge${path}` }, 'strong');
    await within(op.done, 10_000, 'a strong op after the attack');
    expect(op.views.frames.at(-1)?.t).not.toBe('error');
    c.close();
    await cluster.converged();
  },
);
