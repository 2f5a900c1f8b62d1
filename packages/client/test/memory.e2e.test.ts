import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

describe('the in-memory binding', () => {
  // Plain Node, as a user runs it: the script imports the built packages (dist/, which the test
  // run's global setup keeps up to date); what is tested is the process's lifetime.
  it('keeps a plain node script alive while it awaits an op: exit 0, not 13', () => {
    const here = dirname(fileURLToPath(import.meta.url));
    const run = spawnSync(process.execPath, [join(here, 'fixtures', 'in-memory-app.mjs')], {
      cwd: join(here, '..'),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect({ status: run.status, stdout: run.stdout, stderr: run.stderr }).toEqual({
      status: 0,
      stdout: 'n = 1\n',
      stderr: '',
    });
  });
});
