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
