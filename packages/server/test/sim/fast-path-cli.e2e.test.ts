import { describe, expect, it } from 'vitest';
import { runSimScript, type ScriptRun } from './run-script.js';

/** `npm run sim:fast-path` as a user runs it. */
const cli = (args: string[]): Promise<ScriptRun> => runSimScript('fast-path/cli.ts', args);

describe('npm run sim:fast-path', () => {
  it('prints each region against its bound, and fails when the planted bug is caught', async () => {
    const ok = await cli([
      '--today',
      'off',
      '--seeds',
      '1',
      '--keys',
      '20',
      '--workload-ms',
      '1000',
    ]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^\| ap-southeast \| 146 \| \d+ \/ \d+ \(\d\.\d\d×\) \|/m);
    expect(ok.stdout).toContain('sim:fast-path: every run passed its checkers');
    const planted = await cli([
      '--today',
      'off',
      '--seeds',
      '1',
      '--keys',
      '20',
      '--plant',
      'fast-path-changed-deps',
    ]);
    expect(planted.code).toBe(1);
    expect(planted.stdout).toContain('(c) conflicting ops');
    expect(planted.stdout).toContain('sim:fast-path: the planted bug was caught on 1 of 1 runs');
    expect(planted.stdout).toContain('sim:fast-path: 1 runs failed their checkers');
    expect(planted.stderr).not.toContain("today's path");
  }, 120_000);

  it('refuses bad flags with the usage and exit status 2', async () => {
    for (const [args, says] of [
      [['--profile', 'mars'], "--profile must be one of us-eu, global, got 'mars'"],
      [['--keys', '20,x'], "--keys must be a whole number from 1 to 10000000, got 'x'"],
      [['--seeds', '0'], '--seeds must be a whole number from 1 to 10000'],
      [['--rate'], '--rate needs a value'],
      [['--today', 'maybe'], "--today must be on or off, got 'maybe'"],
      [['--plant', 'other'], '--plant must be fast-path-changed-deps'],
      [['--sedes', '3'], 'unknown flag --sedes'],
      [['--rate', '5000'], '--rate must be a whole number from 1 to 200'],
    ] as const) {
      const r = await cli([...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(says);
      expect(r.stderr).toContain('usage: npm run sim:fast-path');
    }
  }, 120_000);
});
