import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { defineApp, type App } from '@creek/app';

/** Extensions of TypeScript modules: loaded through tsx, an optional peer dependency. */
const TYPESCRIPT = /\.[cm]?tsx?$/;

/**
 * The app a replica runs: the module at `path`, whose default export is `defineApp(...)`; the
 * built-ins when `path` is undefined. A `.js`/`.mjs` file is imported by Node itself, exactly that
 * file; a `.ts` file goes through tsx, which only then is loaded (the replica itself is built
 * JavaScript). Throws an Error that names the file and says what is wrong with it.
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
    mod = TYPESCRIPT.test(file)
      ? await importTypeScript(file, what)
      : ((await import(pathToFileURL(file).href)) as Record<string, unknown>);
  } catch (err) {
    if (err instanceof TsxMissing) throw new Error(err.message);
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

class TsxMissing extends Error {}

/**
 * Imports a TypeScript module through tsx's scoped API: only this module and what it imports go
 * through tsx's loader, not the replica's own (built) modules.
 */
async function importTypeScript(file: string, what: string): Promise<Record<string, unknown>> {
  let api: { tsImport(specifier: string, parentURL: string): Promise<unknown> };
  try {
    api = (await import('tsx/esm/api')) as typeof api;
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    throw new TsxMissing(
      `${what}: ${file} is TypeScript, and loading it needs tsx, which is not installed here. ` +
        'Install it next to @creek/server (npm install --save-dev tsx), or compile the app and pass the .js file',
    );
  }
  return (await api.tsImport(pathToFileURL(file).href, import.meta.url)) as Record<string, unknown>;
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
