// A consumer's app in plain JavaScript: what `creek dev --app app.js` runs. `creek dev --app`
// verifies users' tokens (its dev identity provider), and the client of use-cluster.mjs signs in as
// no one: its ops say `public: true`, and the app opens the built-in kv.* ops to anyone too
// (docs/getting-started.md's first app does the same for counter.add).
import { z } from 'zod';
import { defineApp, op } from '@creek/app';

export default defineApp(
  {
    'counter.add': op({
      public: true,
      args: z.object({ name: z.string().min(1), by: z.number().int() }),
      run(tx, { name, by }) {
        const next = (tx.get(name) ?? 0) + by;
        tx.put(name, next);
        return next;
      },
    }),
    'counter.get': op({
      public: true,
      args: z.object({ name: z.string().min(1) }),
      readOnly: true,
      run: (tx, { name }) => tx.get(name) ?? 0,
    }),
  },
  { builtins: 'public' },
);
