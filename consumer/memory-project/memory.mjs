// A whole cluster in this process from @creek/client/memory and @creek/replica alone: no server,
// no SQLite, no sockets between replicas. Prints the tentative and stable views of one op.
import { z } from 'zod';
import { defineApp, op } from '@creek/app';
import { connectInMemory } from '@creek/client/memory';

const app = defineApp({
  'counter.add': op({
    args: z.object({ by: z.number().int() }),
    run(tx, { by }) {
      const next = (tx.get('n') ?? 0) + by;
      tx.put('n', next);
      return next;
    },
  }),
});

const { client, cluster } = connectInMemory({ app, replicas: 3 });
const views = [];
const c = client.invoke('counter.add', { by: 2 });
c.setCallbacks({
  onUpdate: (v) => views.push(`tentative:${v}`),
  onFinal: (v) => views.push(`stable:${v}`),
});
await c;
client.close();
cluster.close();
console.log(views.join(' '));
