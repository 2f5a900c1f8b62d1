import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { App } from '../core/app.js';
import { defineApp } from '../core/define-app.js';

/** The app a replica runs: a module whose default export is `defineApp(...)`, or the built-ins. */
export async function loadApp(path: string | undefined): Promise<App> {
  if (path === undefined) return defineApp({});
  const mod = (await import(pathToFileURL(resolve(path)).href)) as { default?: unknown };
  const app = mod.default as Partial<App> | undefined;
  if (app === undefined || typeof app.lookup !== 'function' || typeof app.names !== 'function') {
    throw new Error(`--app ${path}: the module's default export must be defineApp({...})`);
  }
  return app as App;
}
