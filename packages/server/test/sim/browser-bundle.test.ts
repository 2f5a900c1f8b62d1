import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { runSimulation, type SimResult } from '../../src/sim/simulation.js';
import { simInAPage } from './sim-in-page.js';

/**
 * The visualizer replays seeds in the browser: the simulator (with the pure core, CAB and gossip
 * it drives) must bundle for a browser and run without Node's built-ins, and a seed must give the
 * same run there as here.
 */
describe('the simulator in a browser bundle', () => {
  it('bundles with no Node built-in and replays a seed exactly, without process, Buffer or require', async () => {
    const page = await simInAPage();
    const inBrowser = vm.runInContext(
      'CreekSim.runSimulation({ seed: 7, replicas: 3 })',
      page,
    ) as SimResult;
    const here = runSimulation({ seed: 7, replicas: 3 });
    expect(inBrowser.ok).toBe(true);
    expect([...inBrowser.committedOrder]).toEqual([...here.committedOrder]);
    expect(inBrowser.stats.messages).toBe(here.stats.messages);
    // Storage faults checksum records with a CRC-32 of the simulator's own, not node:zlib's.
    const damaged = {
      seed: 16,
      replicas: 3,
      faults: 'crash',
      storageFaults: ['torn', 'corrupt', 'stale'],
    } as const;
    const damagedInBrowser = vm.runInContext(
      `CreekSim.runSimulation(${JSON.stringify(damaged)})`,
      page,
    ) as SimResult;
    const damagedHere = runSimulation(damaged);
    expect(damagedHere.stats.damagedDisks).toBe(1);
    expect(damagedInBrowser.stats).toEqual(damagedHere.stats);
    expect([...damagedInBrowser.committedOrder]).toEqual([...damagedHere.committedOrder]);
  });
});
