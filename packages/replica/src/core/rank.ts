/**
 * An entry's place in the order as plain numbers, compared as `precedes` compares entries: for
 * executors that keep a copy of the store in another thread (see exec/mirror-store.ts).
 */
export type Rank = readonly [commitSeq: number, ts: number, replica: number, eventNo: number];
