import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The built `creek` command. */
export const CREEK_BIN = fileURLToPath(new URL('../../bin/creek.js', import.meta.url));

/** This process's environment without CREEK_* settings, which would add to a command's flags. */
const ENV = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !k.startsWith('CREEK_')),
);

/**
 * `creek …` as a child process, without blocking this one (a test's SDK clients keep working
 * meanwhile): its exit code and what it printed.
 */
export function creek(
  ...args: string[]
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CREEK_BIN, ...args], { env: ENV });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => resolve({ code, out, err }));
  });
}
