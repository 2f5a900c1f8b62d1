import { describe, expect, it } from 'vitest';
import { runBench } from './run-bench.js';

const run = (args: string[]) => runBench('geo-paths.ts', args);

describe('bench:geo-paths', () => {
  it.each([
    [
      ['--profile', 'us-europe'],
      /unknown network profile 'us-europe'; the profiles are lan, us-eu, global/,
    ],
    [['--ops', '5'], /--ops must be a whole number from 10 to 1000000/],
    [['--ops', '1e3x'], /--ops must be a whole number/],
    [['--conflicts', '1.5'], /--conflicts must be a number from 0 to 1/],
    [['--conflicts', ''], /--conflicts needs a value/],
    [['--seed', '-1'], /--seed must be a whole number/],
    [['--profiles', 'global'], /unknown argument '--profiles'/],
  ])('refuses %j with status 2 and says why', async (args, message) => {
    const r = await run(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it('prints one row per region of the profile, with its bound', async () => {
    const r = await run(['--profile', 'us-eu', '--ops', '50']);
    expect(r.code).toBe(0);
    for (const region of ['us-east', 'us-west', 'eu-west'])
      expect(r.stdout).toMatch(new RegExp(`^\\| ${region} \\| \\d+ \\|`, 'm'));
    expect(r.stdout).toMatch(/^\| mean ÷ bound \|/m);
  });
});
