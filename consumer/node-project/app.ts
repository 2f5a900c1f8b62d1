// The same app in TypeScript: `creek dev --app app.ts` needs tsx, which this project lacks.
import { z } from 'zod';
import { defineApp, op } from '@creek/app';

export default defineApp({
  'counter.get': op({
    args: z.object({ name: z.string() }),
    readOnly: true,
    run: (tx, { name }) => (tx.get(name) as number | undefined) ?? 0,
  }),
});
