import { accessSync, constants, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * Creates the data directory `dir` if needed and checks that this process may write in it, so
 * that a bad `--data` is reported with its path and a remedy, not by SQLite as "unable to open
 * database file". Returns the absolute path.
 */
export function ensureWritableDir(dir: string): string {
  const abs = resolve(dir);
  try {
    mkdirSync(abs, { recursive: true });
    accessSync(abs, constants.W_OK | constants.X_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new Error(
      `--data ${dir}: cannot create or write the directory ${abs} (${code}); choose a directory this user can write, or fix its permissions`,
    );
  }
  return abs;
}
