/**
 * The candidate nearest to a mistyped name, or undefined when none is near enough to be what was
 * meant. Distance: edits (insert, delete, substitute, swap two neighbours), so `--tokne-file` is one
 * edit from `--token-file` and `--replica` one from `--replicas`.
 */
export function closestName(input: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(input, c);
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  // A third of the name, at least 2: `bogus` suggests nothing rather than `dev`.
  return bestDistance <= Math.max(2, Math.floor(input.length / 3)) ? best : undefined;
}

/** Optimal string alignment distance (Damerau–Levenshtein without repeated edits of a substring). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  return d[a.length]![b.length]!;
}
