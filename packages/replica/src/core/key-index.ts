/**
 * The keys of a store, for `tx.scan(prefix)`: a trie over the '/'-separated segments of each key,
 * so that a scan visits the keys under its prefix and not every key of the state (a TPC-C replica
 * holds hundreds of thousands of keys; Delivery alone scans ten prefixes per transaction).
 *
 * A scan's prefix need not end at a segment boundary: `a/b` finds `a/b`, `a/bc/d` and `a/b/x`.
 * Adding and removing a key cost its number of segments.
 */
interface TrieNode {
  readonly children: Map<string, TrieNode>;
  /** A key ends at this node. */
  leaf: boolean;
}

const node = (): TrieNode => ({ children: new Map(), leaf: false });

export class KeyIndex {
  private readonly root = node();
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(key: string): void {
    let n = this.root;
    for (const segment of key.split('/')) {
      let next = n.children.get(segment);
      if (next === undefined) {
        next = node();
        n.children.set(segment, next);
      }
      n = next;
    }
    if (!n.leaf) this.count++;
    n.leaf = true;
  }

  delete(key: string): void {
    const segments = key.split('/');
    const path: TrieNode[] = [this.root];
    for (const segment of segments) {
      const next = path[path.length - 1]!.children.get(segment);
      if (next === undefined) return;
      path.push(next);
    }
    const last = path[path.length - 1]!;
    if (!last.leaf) return;
    last.leaf = false;
    this.count--;
    // Prune the nodes the key alone kept.
    for (let i = segments.length; i > 0; i--) {
      const n = path[i]!;
      if (n.leaf || n.children.size > 0) break;
      path[i - 1]!.children.delete(segments[i - 1]!);
    }
  }

  /** The keys starting with `prefix`, sorted. */
  withPrefix(prefix: string): string[] {
    const segments = prefix.split('/');
    const partial = segments.pop()!;
    let n = this.root;
    for (const segment of segments) {
      const next = n.children.get(segment);
      if (next === undefined) return [];
      n = next;
    }
    const base = segments.length === 0 ? '' : `${segments.join('/')}/`;
    const out: string[] = [];
    for (const [segment, child] of n.children)
      if (segment.startsWith(partial)) collect(child, base + segment, out);
    return out.sort();
  }
}

function collect(n: TrieNode, key: string, out: string[]): void {
  if (n.leaf) out.push(key);
  for (const [segment, child] of n.children) collect(child, `${key}/${segment}`, out);
}
