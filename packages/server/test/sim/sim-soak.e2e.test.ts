import { describe, expect, it } from 'vitest';
import { runSimScript } from './run-script.js';

/** A script of the simulator as a user runs it: its exit status and output. */
async function run(script: 'soak' | 'cli', args: string[]): Promise<{ code: number; out: string }> {
  const r = await runSimScript(`${script}.ts`, args);
  return { code: r.code, out: r.stdout + r.stderr };
}

/**
 * `npm run sim:soak`: a time-boxed sweep of new seeds (CI runs one on every commit, from a range
 * derived from the commit id). What is asserted is what it tells: the range, the summary, and for
 * each failure a replay command that fails the same way.
 */
describe('npm run sim:soak', () => {
  it('runs seeds from a range derived from a commit id until its time is up, and sums them up', async () => {
    const r = await run('soak', ['--minutes', '0.05', '--from', '3d1ef17abc']);
    expect(r.code).toBe(0);
    // 1,000,000 + (0x3d1ef17a >>> 1): the same commit always explores the same seeds.
    expect(r.out).toContain('seeds from 513719037 (derived from 3d1ef17abc)');
    const summary = /sim:soak: (\d+) seeds \(513719037–(\d+)\), (\d+) passed, 0 failed/.exec(r.out);
    expect(summary).not.toBeNull();
    const [, ran, last, passed] = summary!.map(Number);
    expect(ran).toBeGreaterThan(0);
    expect(passed).toBe(ran);
    expect(last).toBe(513719037 + ran! - 1);
  });

  it('runs every seed with storage faults, and a failure’s replay command names them', async () => {
    const r = await run('soak', [
      ...['--minutes', '0.05', '--first', '16', '--replicas', '3', '--faults', 'crash'],
      ...['--storage-faults', 'torn,corrupt,stale', '--plant', 'ignore-checksums'],
    ]);
    expect(r.out).toContain('storage faults: torn,corrupt,stale, bug planted: ignore-checksums');
    // Seed 16 is caught (the simulator's tests of storage faults).
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      'replay: npm run sim -- --seed 16 --replicas 3 --faults crash --storage-faults torn,corrupt,stale --plant ignore-checksums --verbose',
    );
  });

  it('prints, for a failing seed, the command that replays it, and the replay fails the same way', async () => {
    const r = await run('soak', [
      ...['--minutes', '0.05', '--first', '4', '--replicas', '3', '--faults', 'crash'],
      ...['--plant', 'send-before-durable'],
    ]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/sim:soak: \d+ seeds \(4–\d+\), \d+ passed, [1-9]\d* failed/);
    const replay = /replay: npm run sim -- (.+)$/m.exec(r.out);
    expect(replay).not.toBeNull();
    expect(replay![1]).toContain('--plant send-before-durable');
    const again = await run('cli', replay![1]!.split(' '));
    expect(again.code).toBe(1);
    expect(again.out).toMatch(/sim: 0 passed, 1 failed/);
  });

  it.each([
    [[], /--minutes N is required/],
    [['--minutes', 'soon'], /--minutes: .*number/i],
    [['--minutes', '-1'], /--minutes/],
    [['--minutes', '1', '--faults', 'al'], /--faults/],
    [['--minutes', '1', '--frist', '3'], /Unknown option '--frist'/],
    [['--minutes', '1', '--first', '3', '--from', 'abc1234'], /give one/],
    [['--minutes', '1', '--from', 'main'], /--from: a commit id/],
    [['--minutes', '1', '--plant', 'nothing'], /--plant/],
    [
      ['--minutes', '1', '--storage-faults', 'bitrot'],
      /--storage-faults: takes all .*, got "bitrot"/,
    ],
    [['--minutes', '1', '--storage-faults'], /--storage-faults/],
  ])('refuses %j with a clear message and status 2', async (args, message) => {
    const r = await run('soak', args);
    expect(r.code).toBe(2);
    expect(r.out).toMatch(message);
  });
});
