import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { App } from '../core/app.js';
import { defineApp } from '../core/define-app.js';
import { importExact } from './import-exact.mjs';

/**
 * The app a replica runs: the module at `path` (a `.ts` file goes through tsx, a `.js` file is
 * loaded as itself), whose default export is `defineApp(...)`; the built-ins when `path` is
 * undefined. Throws an Error that names the file and says what is wrong with it.
 */
export async function loadApp(path: string | undefined): Promise<App> {
  if (path === undefined) return defineApp({});
  const file = resolve(path);
  const what = `--app ${path}`;
  const stat = statSync(file, { throwIfNoEntry: false });
  if (stat === undefined) throw new Error(`${what}: no such file (${file})`);
  if (!stat.isFile()) throw new Error(`${what}: ${file} is not a file; name the app's module`);
  let mod: Record<string, unknown>;
  try {
    mod = await importExact(pathToFileURL(file).href);
  } catch (err) {
    throw new Error(`${what}: loading ${file} failed: ${describeLoadError(err)}`);
  }
  if (mod.default === undefined)
    throw new Error(
      `${what}: ${file} has no default export; end it with export default defineApp({...})`,
    );
  const app = mod.default as Partial<App>;
  if (typeof app.lookup !== 'function' || typeof app.names !== 'function')
    throw new Error(`${what}: the default export of ${file} must be defineApp({...})`);
  return app as App;
}

/**
 * Node's SyntaxError has no file or line in its message (and may come from a module the app
 * imports); tsx's (esbuild's) has both. Anything else the module threw while it ran, e.g.
 * defineApp refusing an op name, is reported as its message.
 */
function describeLoadError(err: unknown): string {
  if (err instanceof SyntaxError)
    return `syntax error in it or a module it imports: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
