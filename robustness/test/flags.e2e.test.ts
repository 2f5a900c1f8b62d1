import { describe, expect, it } from 'vitest';
import { runRobustness } from './run-cli.js';

// The flags are checked before any replica starts: none of these calls starts a cluster.
describe('npm run robustness checks its flags before starting anything', () => {
  it('prints its usage with --help and exits 0', async () => {
    const r = await runRobustness(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('npm run robustness -- [options]');
    expect(r.stdout).toContain('--nemesis LIST');
  });

  it.each([
    [['--sed', '1'], /unknown flag --sed \(did you mean --seed\?\)/],
    [['--duration', '60'], /unknown flag --duration/],
    [['--seed', '-1'], /--seed is followed by what looks like another flag; .* --seed=<value>/],
    [['--seed=-1'], /--seed must be a whole number from 0 to 2147483647/],
    [['--seed', '1e3'], /--seed must be a whole number from 0 to 2147483647/],
    [['--duration-s', '5'], /--duration-s must be a whole number from 10 to 3600/],
    [['--duration-s', 'sixty'], /--duration-s must be a whole number from 10 to 3600/],
    [['--runs', '0'], /--runs must be a whole number from 1 to 1000/],
    [['--replicas', '4'], /--replicas must be 3 or 5/],
    [['--nemesis', 'kill,frezee'], /--nemesis: unknown fault 'frezee' \(did you mean 'freeze'\?\)/],
    [['--nemesis', ''], /--nemesis: unknown fault ''/],
    [['--seed'], /--seed.*argument missing|--seed' argument missing/],
    [['60'], /Unexpected argument '60'/],
  ])('refuses %j with exit status 2', async (args, message) => {
    const r = await runRobustness(args);
    expect(r.stderr).toMatch(message);
    expect(r.code).toBe(2);
    expect(r.stderr).not.toMatch(/run 1\//);
  });
});
