import { createApp, type App, type OpDefinitions } from './app.js';
import { builtins, type Builtins } from './builtins.js';

/**
 * Declares an application: its named ops plus the built-in `kv.*` and `queue.*` ops.
 *
 * ```ts
 * export default defineApp({
 *   buyTicket: op({ args: z.object({ event: z.string() }), run(tx, { event }) { ... } }),
 * });
 * ```
 */
export function defineApp<D extends OpDefinitions>(definitions: D): App<D & Builtins> {
  return createApp(definitions, builtins) as App<D & Builtins>;
}
