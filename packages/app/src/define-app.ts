import { createApp, type App, type AppOptions, type OpDefinitions } from './app.js';
import { builtins, type Builtins } from './builtins.js';

/**
 * Declares an application: its named ops plus the built-in `kv.*` and `queue.*` ops.
 *
 * ```ts
 * export default defineApp({
 *   buyTicket: op({ args: z.object({ event: z.string() }), run(tx, { event }) { ... } }),
 * });
 * ```
 *
 * Once the cluster verifies user tokens, every op needs a signed-in user unless it says `public:
 * true` or gives an `access` check, and the built-in `kv.*` and `queue.*` ops are closed to end
 * users unless `options.builtins` opens them ('public' or 'signed-in').
 */
export function defineApp<D extends OpDefinitions>(
  definitions: D,
  options: AppOptions = {},
): App<D & Builtins> {
  return createApp(definitions, builtins, options) as App<D & Builtins>;
}
