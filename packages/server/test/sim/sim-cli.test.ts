import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runSimulation } from '../../src/sim/simulation.js';

const root = fileURLToPath(new URL('../../../..', import.meta.url));

/** `npm run sim` as a user runs it: its exit status, stdout and stderr. */
function sim(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', '--conditions=creek-source', 'packages/server/src/sim/cli.ts', ...args],
      { cwd: root, timeout: 60_000, maxBuffer: 64 << 20 },
      (err, stdout, stderr) =>
        resolve({
          code: err === null ? 0 : Number((err as { code?: number }).code),
          stdout,
          stderr,
        }),
    );
  });
}

describe('npm run sim', () => {
  it('--json prints one JSON object per seed, with the committed order a replay must show', async () => {
    const r = await sim(['--seeds', '2', '--first', '5', '--json']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    const [first] = lines.map(
      (l) =>
        JSON.parse(l) as {
          seed: number;
          ok: boolean;
          faults: string;
          committedOrder: string[];
          stats: { committed: number };
        },
    );
    expect(first).toMatchObject({ seed: 5, ok: true, faults: 'all' });
    expect(first!.committedOrder.length).toBe(first!.stats.committed);
    for (const id of first!.committedOrder) expect(id).toMatch(/^r\d+#\d+$/);
    // The same order as the simulation run here: a seed replays exactly.
    expect(first!.committedOrder).toEqual([
      ...runSimulation({ seed: 5, replicas: 3 }).committedOrder,
    ]);
    expect(r.stderr).toMatch(/sim: 2 passed, 0 failed/);
  });

  it('refuses a fault mode it does not know, listing the ones it does', async () => {
    const r = await sim(['--seed', '1', '--faults', 'lagg']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /--faults must be one of none, partition, crash, all, lag, lag-cut, got lagg/,
    );
  });
});
