/**
 * `--weight` of bench:tpcc and bench:tpcc-scaling: the extra work every TPC-C transaction does
 * (the app's weight.ts), by name (`today`, `paper`, `paper5`) or as a whole number of rounds.
 */
import { MAX_WORK, TPCC_WEIGHTS } from '../../packages/examples/src/tpcc/weight.js';

export interface WeightFlag {
  /** As the report names it: the weight's name, or `N rounds`. */
  readonly name: string;
  /** Rounds of work per transaction. */
  readonly work: number;
}

/** The default: TPC-C's transactions as they are. */
export const TODAY: WeightFlag = { name: 'today', work: TPCC_WEIGHTS.today };

/** The flag's value, or the message to refuse it with. */
export function parseWeight(raw: string): WeightFlag | string {
  if (Object.hasOwn(TPCC_WEIGHTS, raw))
    return { name: raw, work: TPCC_WEIGHTS[raw as keyof typeof TPCC_WEIGHTS] };
  if (/^\d{1,9}$/.test(raw) && Number(raw) <= MAX_WORK)
    return { name: `${Number(raw)} rounds`, work: Number(raw) };
  return `--weight must be ${Object.keys(TPCC_WEIGHTS).join(', ')} or a whole number of rounds up to ${MAX_WORK}, not '${raw}'`;
}
