import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Runs a benchmark's entry (`bench/src/<script>`) with `args` as `npm run bench:*` would, writing
 * no results record: its exit status, stdout and stderr. For the tests of its flags, which are
 * checked before anything starts.
 */
export function runBench(
  script: string,
  args: readonly string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', '--conditions=creek-source', `bench/src/${script}`, ...args],
      { cwd: root, timeout: 60_000, env: { ...process.env, CREEK_BENCH_RESULTS: 'off' } },
      (err, stdout, stderr) =>
        resolve({
          code: err === null ? 0 : ((err as { code?: number }).code ?? null),
          stdout,
          stderr,
        }),
    );
  });
}
