// Type-checked with the consumer's strict options (tsconfig.json), never run: @creek/react's hooks
// typed from the app. Each expected error below must fire.
import { createCreekHooks } from '@creek/react';
import type app from './app.js';

const { useInvoke, useOp, useWatch } = createCreekHooks<typeof app>();

export function useVisits(): number | undefined {
  const visits = useInvoke('counter.get', { name: 'visits' });
  const add = useOp('counter.add');
  void add.invoke({ name: 'visits', by: 1 });
  // @ts-expect-error an op name the app does not define
  useInvoke('counter.reset', { name: 'visits' });
  // @ts-expect-error an argument of the wrong type
  void add.invoke({ name: 'visits', by: 'one' });
  useWatch('counter.get', { name: 'visits' });
  // @ts-expect-error counter.add writes: only read-only ops can be watched
  useWatch('counter.add', { name: 'visits', by: 1 });
  const n: number | undefined = visits.value;
  return n;
}
