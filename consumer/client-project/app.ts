// A client-only project defines (or shares) its app with @creek/app and Zod: no server code.
import { z } from 'zod';
import { defineApp, op } from '@creek/app';

export default defineApp({
  'counter.add': op({
    args: z.object({ name: z.string().min(1), by: z.number().int() }),
    run(tx, { name, by }) {
      // The test looks for this text in the page's bundle: the page must not ship op code.
      if (by === 0) throw new Error('counter.add adds a whole number other than 0');
      const next = ((tx.get(name) as number | undefined) ?? 0) + by;
      tx.put(name, next);
      return next;
    },
  }),
  'counter.get': op({
    args: z.object({ name: z.string().min(1) }),
    readOnly: true,
    run: (tx, { name }) => (tx.get(name) as number | undefined) ?? 0,
  }),
});
