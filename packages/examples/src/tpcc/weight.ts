/**
 * A transaction's weight: extra, deterministic computation a TPC-C transaction does besides its
 * reads and writes, so a benchmark can give the transactions the cost the Creek paper's had.
 *
 * Why: as written, a transaction of the standard mix costs a replica about 0.1–0.2 ms of
 * execution, so the work around an execution (ordering, versions, answers, handing it to a worker)
 * weighs as much as the execution itself. The paper's single-threaded SMR peaked at about 2,700
 * tx/s (Creek §6.2: about 0.37 ms per transaction), and §6.3 runs transactions five times longer.
 * Concurrent execution (§4.4) pays only where execution dominates; a weight puts the benchmark in
 * that regime without changing what the transactions read or write.
 *
 * How: the client names the weight in the op's arguments (`work`: a number of rounds), and the op
 * runs that many rounds of a 32-bit integer mixing function seeded from its own arguments, and
 * returns the result in its answer (`work`), so the computation cannot be optimised away. It is a
 * pure function of the arguments: no clock, no randomness, the same value on every replica and
 * every re-execution. A weight in the arguments, rather than a setting of the replica or a value
 * in the state, keeps the app honest (the transactions read and write exactly what TPC-C says)
 * and keeps replicas agreeing (they all run the same op with the same arguments).
 */

/** Rounds of `work` per transaction for each named weight. */
export const TPCC_WEIGHTS = {
  /** The transactions as TPC-C defines them: no extra work. */
  today: 0,
  /**
   * About 0.37 ms per transaction executed inline at 20 warehouses (the Creek paper's SMR peak of
   * 2,700 tx/s on one thread): about 0.2 ms of work on top of the transaction's own 0.175 ms, on
   * the 2-core machine it was calibrated on (README.md, "Weight").
   */
  paper: 57_000,
  /** Five times the paper's transaction (§6.3): about 1.85 ms per transaction, likewise. */
  paper5: 490_000,
} as const satisfies Record<string, number>;

export type TpccWeightName = keyof typeof TPCC_WEIGHTS;

/** The most rounds an op accepts: about 15 ms on the machine the weights were calibrated on. */
export const MAX_WORK = 4_000_000;

/**
 * `rounds` rounds of a 32-bit mixing function (a murmur-style finaliser plus a constant, so zero
 * is no fixed point) from `seed`. Deterministic: integers only, no allocation.
 */
export function work(rounds: number, seed: number): number {
  let h = seed | 0;
  for (let i = 0; i < rounds; i++) {
    h ^= h >>> 16;
    h = Math.imul(h, 0x7feb352d);
    h ^= h >>> 15;
    h = Math.imul(h, 0x846ca68b);
    h ^= h >>> 16;
    h = (h + 0x9e3779b9) | 0;
  }
  return h >>> 0;
}

/**
 * The seed of an op's work: FNV-1a over its arguments' JSON (the parsed arguments, whose keys are
 * in the schema's order), so two transactions with different inputs do different work.
 */
export function workSeed(args: unknown): number {
  const text = JSON.stringify(args);
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * The op's weight, done: `{ work: result }` to spread into its answer, or nothing when the
 * arguments ask for none (the answers are then exactly TPC-C's).
 */
export function weigh(args: { readonly work: number }): { work?: number } {
  return args.work === 0 ? {} : { work: work(args.work, workSeed(args)) };
}
