import { describe, expect, it } from 'vitest';
import { runBench } from './run-bench.js';

// No Toxiproxy, Go or etcd is reached on these paths: the flags are checked first.
const geo = (args: string[]) => runBench('geo.ts', args);

describe('bench:geo checks its flags before starting anything', () => {
  it('prints its usage with --help and exits 0', async () => {
    const r = await geo(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/npm run bench:geo \[-- --profile lan\|us-eu\|global/);
  });

  it.each([
    [
      ['--profile', 'mars'],
      /--profile: unknown network profile 'mars'; the profiles are lan, us-eu, global/,
    ],
    [['--profile'], /--profile needs a value/],
    [['--ops', '5'], /--ops must be a whole number from 10 to 100000/],
    [['--ops', 'ten'], /--ops must be a whole number from 10 to 100000/],
    [['--ops', '1.5e2'], /--ops must be a whole number from 10 to 100000/],
    [['--seconds', '0'], /--seconds must be a whole number from 1 to 600/],
    [['--ads', '-1'], /--ads must be a whole number from 0 to 10000/],
    [
      ['--outstanding', '64,x'],
      /--outstanding must be comma-separated whole numbers from 1 to 4096/,
    ],
    [['--outstanding', '0'], /--outstanding must be comma-separated whole numbers from 1 to 4096/],
    [['--reads', 'local'], /--reads must be leader or quorum/],
    [['--reads'], /--reads needs a value/],
    [['--network', 'WAN'], /--network must be lan or wan/],
    [['--profle', 'lan'], /unknown argument '--profle'/],
    [['lan'], /unknown argument 'lan'/],
  ])('refuses %j with exit status 2', async (args, message) => {
    const r = await geo(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/Creek: starting|building Toxiproxy/);
  });
});
