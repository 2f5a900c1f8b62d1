import { describe, expect, it } from 'vitest';
import { runBench } from './run-bench.js';

// Nothing is loaded or started on these paths: the flags are checked first.
describe.each([
  ['tpcc.ts', 'bench:tpcc'],
  ['tpcc-scaling.ts', 'bench:tpcc-scaling'],
  ['tpcc-profile.ts', 'bench:tpcc-profile'],
])('%s checks --weight before starting anything', (script, name) => {
  it('names the weights in its usage', async () => {
    const r = await runBench(script, ['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`npm run ${name}`);
    expect(r.stdout).toContain('--weight today|paper|paper5|ROUNDS');
  });

  it.each([['heavy'], ['-5'], ['1.5'], ['99999999999'], ['1e5'], ['']])(
    'refuses --weight %j with exit status 2',
    async (value) => {
      const r = await runBench(script, ['--weight', value]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(
        value === ''
          ? /--weight needs a value/
          : /--weight must be today, paper, paper5 or a whole number of rounds up to \d+/,
      );
    },
  );
});

describe('bench:tpcc checks its ladder flags before starting anything', () => {
  it.each([
    [['--rounds', '0'], /--rounds must be a whole number from 1 to 50/],
    [['--rounds', '2.5'], /--rounds must be a whole number from 1 to 50/],
    [['--p99-factor', '1'], /--p99-factor must be a number from 1.1 to 1000/],
    [['--p99-factor', 'ten'], /--p99-factor must be a number from 1.1 to 1000/],
    [['--misses', '0'], /--misses must be a whole number from 1 to 50/],
    [['--p99-bound-ms', '0'], /--p99-bound-ms must be a number from 1 to 600000/],
    [['--p99-bound-ms', '5s'], /--p99-bound-ms must be a number from 1 to 600000/],
    [['--p99Factor', '10'], /unknown argument '--p99Factor'/],
  ])('refuses %j with exit status 2', async (args, message) => {
    const r = await runBench('tpcc.ts', args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/starting \d+ replicas/);
  });

  it('names them in its usage', async () => {
    const r = await runBench('tpcc.ts', ['--help']);
    expect(r.stdout).toContain('--rounds 3 --p99-factor 10 --p99-bound-ms MS --misses 2');
  });
});

describe('bench:replica-profile checks its flags and inputs', () => {
  it.each([
    [[], /--run and --tx are needed/],
    [['--run', '/nonexistent-profiles', '--tx', '10'], /nonexistent-profiles/],
    [['--run', 'bench/src', '--tx', '10'], /bench\/src: no \.cpuprofile files/],
    [['--run', 'bench/src', '--tx', '0'], /--tx must be a whole number from 1/],
    [['--run', 'bench/src', '--tx', 'many'], /--tx must be a whole number from 1/],
    [['--runs', 'x'], /unknown argument '--runs'/],
  ])('refuses %j with exit status 2', async (args, message) => {
    const r = await runBench('replica-profile.ts', args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});
