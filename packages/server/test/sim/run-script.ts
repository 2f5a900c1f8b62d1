import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../..', import.meta.url));

/** What a simulator script printed, and its exit status. */
export interface ScriptRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * A simulator script (`script`, a path under packages/server/src/sim/) as `npm run sim…` runs it:
 * plain `node` with tsx and the source condition, from the repository root.
 */
export function runSimScript(
  script: string,
  args: readonly string[],
  timeoutMs = 120_000,
): Promise<ScriptRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [
        '--import',
        'tsx',
        '--conditions=creek-source',
        `packages/server/src/sim/${script}`,
        ...args,
      ],
      { cwd: root, timeout: timeoutMs, maxBuffer: 64 << 20 },
      (err, stdout, stderr) =>
        resolve({
          code: err === null ? 0 : Number((err as { code?: number }).code),
          stdout,
          stderr,
        }),
    );
  });
}
