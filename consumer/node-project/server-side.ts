// A TypeScript project that runs replicas from code (tests, tools): the server's declarations must
// type-check under the consumer's strict options with skipLibCheck off (tsconfig.json).
import { defineApp, op } from '@creek/app';
import { Replica } from '@creek/server';
import type { ReplicaHost } from '@creek/server/host';
import { LocalCluster, type ReplicaStatus } from '@creek/server/node';
import { z } from 'zod';

const app = defineApp({
  'counter.get': op({
    args: z.object({ name: z.string() }),
    readOnly: true,
    run: (tx, { name }) => (tx.get(name) as number | undefined) ?? 0,
  }),
});

export async function statuses(): Promise<(ReplicaStatus | null)[]> {
  const cluster = await LocalCluster.start({ replicas: 3 });
  try {
    return await Promise.all([0, 1, 2].map((i) => cluster.status(i)));
  } finally {
    await cluster.stop();
  }
}

export const replica = new Replica({ id: 0, app, executionSlots: 2 });
export type Host = ReplicaHost;
