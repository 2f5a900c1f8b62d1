/**
 * A V8 CPU profile (the inspector's `Profiler.stop`, or a `.cpuprofile` file) summed up: its
 * samples' time by category, and the functions with the most self time.
 *
 * A sample's category is that of the innermost frame on its stack that a rule names: a sample in
 * `Map.get` called by the version store called by validation counts as validation, the same
 * `Map.get` called by an op's read as execution. So the rules name the functions that say what the
 * thread was doing, not every function beneath them. Broad rules (a whole package) decide only
 * where no other rule names a frame of the stack.
 */

/** The parts of a V8 profile this reads (inspector protocol, Profiler.Profile). */
export interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: {
      readonly functionName: string;
      readonly url: string;
      readonly lineNumber: number;
    };
    readonly children?: readonly number[];
  }[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples?: readonly number[];
  readonly timeDeltas?: readonly number[];
}

/** A frame is in `category` when its function name and URL match (both, where both are given). */
export interface CategoryRule {
  readonly category: string;
  readonly fn?: RegExp;
  readonly url?: RegExp;
  /** Applies only to stacks no other rule names a frame of. */
  readonly broad?: boolean;
}

export interface ProfileSummary {
  /** Sampled time that was not idle, µs. */
  readonly busyUs: number;
  /** Sampled idle time, µs (the thread waited for work). */
  readonly idleUs: number;
  /** Busy time per category, µs, largest first; `other` for stacks no rule names. */
  readonly categories: readonly { readonly category: string; readonly us: number }[];
  /** Self time per function (name and file), µs, largest first. */
  readonly top: readonly { readonly fn: string; readonly at: string; readonly us: number }[];
}

export const OTHER = 'other';
const IDLE = '(idle)';

/** Sums up `profile` by `rules` (the first rule that matches a frame decides); `top` functions. */
export function summarize(
  profile: CpuProfile,
  rules: readonly CategoryRule[],
  top = 25,
): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const matches = (r: CategoryRule, id: number): boolean => {
    const frame = byId.get(id)!.callFrame;
    return (
      (r.fn === undefined || r.fn.test(frame.functionName)) &&
      (r.url === undefined || r.url.test(frame.url))
    );
  };
  const narrow = rules.filter((r) => r.broad !== true);
  const broad = rules.filter((r) => r.broad === true);
  /** The category of the innermost frame from `id` up that one of `tier` names; null if none. */
  const innermost = (tier: readonly CategoryRule[], id: number): string | null => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const rule = tier.find((r) => matches(r, at!));
      if (rule !== undefined) return rule.category;
    }
    return null;
  };
  const categoryOf = new Map<number, string>();
  const classify = (id: number): string => {
    let category = categoryOf.get(id);
    if (category === undefined) {
      category = innermost(narrow, id) ?? innermost(broad, id) ?? OTHER;
      categoryOf.set(id, category);
    }
    return category;
  };
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  const mean = samples.length === 0 ? 0 : (profile.endTime - profile.startTime) / samples.length;
  const categories = new Map<string, number>();
  const self = new Map<string, { fn: string; at: string; us: number }>();
  let busyUs = 0;
  let idleUs = 0;
  for (let i = 0; i < samples.length; i++) {
    // A sample's time is the gap to the next one (V8's deltas precede each sample).
    const us = Math.max(0, deltas[i + 1] ?? mean);
    const node = byId.get(samples[i]!)!;
    const { functionName, url } = node.callFrame;
    if (functionName === IDLE) {
      idleUs += us;
      continue;
    }
    busyUs += us;
    const category = classify(node.id);
    categories.set(category, (categories.get(category) ?? 0) + us);
    // The file only: a module run through a TypeScript loader reports every function at line 1.
    const at = url.replace(/[?#].*$/, '').replace(/^.*\//, '');
    const key = `${functionName}@${at}`;
    const entry = self.get(key) ?? {
      fn: functionName === '' ? '(anonymous)' : functionName,
      at,
      us: 0,
    };
    entry.us += us;
    self.set(key, entry);
  }
  return {
    busyUs,
    idleUs,
    categories: [...categories]
      .map(([category, us]) => ({ category, us }))
      .sort((a, b) => b.us - a.us),
    top: [...self.values()].sort((a, b) => b.us - a.us).slice(0, top),
  };
}
