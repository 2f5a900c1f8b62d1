import { useMemo, useSyncExternalStore } from 'react';
import type { Correctable, Correction } from '@creek/client';
import { CorrectableStore, type OpState } from './correctable-store.js';

/**
 * The state of a Correctable the app already holds (one row of a list of ops it invoked, say):
 * its latest view and level, error, `pending`, `queued` and `committed`, re-rendering the
 * component as they change. `null` or `undefined`: the idle state. Needs no provider, and no app
 * type: it takes the Correctable's own.
 *
 * ```tsx
 * function Row({ deposit }: { deposit: Correctable<number> }) {
 *   const { level, queued, committed, error } = useCorrectable(deposit);
 *   return <li>{error ? 'failed' : queued ? 'waiting to send' : committed ? 'synced' : level}</li>;
 * }
 * ```
 */
export function useCorrectable<T>(correctable: Correctable<T> | null | undefined): OpState<T> {
  const store = useMemo(
    () =>
      new CorrectableStore<T>(
        correctable === null || correctable === undefined ? null : () => correctable,
      ),
    [correctable],
  );
  return useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot);
}

/**
 * The latest correction of a Correctable the app holds: undefined until a view replaces a
 * different value shown before, then `{ tentative, final, level, causes }` — for a line such as
 * "was $100, now $60 because a withdrawal elsewhere came first". Re-renders when it changes.
 *
 * ```tsx
 * function Balance({ read }: { read: Correctable<number> }) {
 *   const correction = useCorrection(read);
 *   return correction === undefined ? null : (
 *     <p>was {correction.tentative}, now {correction.final}</p>
 *   );
 * }
 * ```
 */
export function useCorrection<T>(
  correctable: Correctable<T> | null | undefined,
): Correction<T> | undefined {
  return useCorrectable(correctable).correction;
}
