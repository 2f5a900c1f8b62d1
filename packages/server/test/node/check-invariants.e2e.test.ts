import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { RawClient, within } from './cluster-harness.js';

const APP = fileURLToPath(new URL('./fixtures/overdraw-app.mjs', import.meta.url));

/**
 * `creek start --check-invariants`: a replica checks the app's invariants on its committed state
 * after each op, logs each one broken as an error and counts it in /status; without the flag it
 * checks nothing.
 */
describe('creek start --check-invariants', () => {
  let cluster: LocalCluster | null = null;
  afterEach(async () => {
    await cluster?.stop(1_000);
    cluster = null;
  });

  it.each([true, false])(
    'checkInvariants %s: /status and the log tell of an overdraft the committed state holds',
    async (checkInvariants) => {
      const logs: string[] = [];
      cluster = await LocalCluster.start({
        replicas: 1,
        logLevel: 'error',
        app: APP,
        checkInvariants,
        onLog: (_, line) => logs.push(line),
      });
      const client = await RawClient.connect(cluster.url(0), cluster.token);
      const w = client.invoke('withdraw', { account: 'acct/a', amount: 5 }, 'strong');
      await within(w.done, 30_000, 'the withdrawal answered');
      // Its stable answer came once it was committed; the check runs as it is finalized.
      const deadline = Date.now() + 30_000;
      let status = await cluster.status(0);
      while (checkInvariants && (status?.invariants?.broken ?? 0) === 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        status = await cluster.status(0);
      }
      expect(status?.invariants).toEqual({
        checked: checkInvariants,
        broken: checkInvariants ? 1 : 0,
      });
      if (checkInvariants)
        expect(logs.join('\n')).toMatch(
          /invariant 'no-overdraft' broken by the finalized state after withdraw at committed position \d+/,
        );
      else expect(logs.join('\n')).not.toMatch(/invariant/);
      client.close();
    },
  );
});
