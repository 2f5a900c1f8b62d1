import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Runs the robustness runner's entry as `npm run robustness` does, with `args`: its exit status,
 * stdout and stderr.
 */
export function runRobustness(
  args: readonly string[],
  timeoutMs = 60_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', '--conditions=creek-source', 'robustness/src/cli.ts', ...args],
      { cwd: root, timeout: timeoutMs, maxBuffer: 64 << 20 },
      (err, stdout, stderr) =>
        resolve({
          code: err === null ? 0 : ((err as { code?: number }).code ?? null),
          stdout,
          stderr,
        }),
    );
  });
}
