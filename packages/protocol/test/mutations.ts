/**
 * Valid frames with one thing broken, for the property tests: a field deleted, retyped or added,
 * a string or the text truncated, JSON spliced into the text.
 */
import fc from 'fast-check';
import { encodeFrame } from '../src/index.js';

/** Every field name and discriminator value of the protocol, plus a few troublemakers. */
export const FIELDS = [
  't',
  'version',
  'token',
  'opId',
  'op',
  'args',
  'level',
  'nonce',
  'from',
  'mac',
  'replica',
  'msg',
  'kind',
  'reqs',
  'seen',
  'reply',
  'ids',
  'type',
  'casts',
  'ballot',
  'instance',
  'value',
  'accepted',
  'decided',
  'truncatedBelow',
  'promised',
  'leading',
  'decidedBelow',
  'deliveredBelow',
  'entries',
  'code',
  'message',
  'ts',
  'id',
  'eventNo',
  'prevStrong',
  'strong',
  'causalCtx',
  'session',
  'user',
  'claims',
  'seq',
  'acked',
  'frames',
  'quorate',
  'knownBelow',
  'constructor',
  'toString',
  '0',
  '1',
];
type Path = (string | number)[];

/** Every node of a JSON value, root first. */
function nodes(v: unknown, at: Path = [], out: { path: Path; value: unknown }[] = []) {
  out.push({ path: at, value: v });
  if (Array.isArray(v)) v.forEach((x, i) => nodes(x, [...at, i], out));
  else if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) nodes(x, [...at, k], out);
  }
  return out;
}

type Container = Record<string | number, unknown>;

function parentOf(root: unknown, path: Path): Container {
  let v = root;
  for (const k of path.slice(0, -1)) v = (v as Container)[k];
  return v as Container;
}

const OTHER_TYPES: unknown[] = [
  null,
  0,
  -1,
  1.5,
  2 ** 53,
  '',
  'x',
  true,
  false,
  [],
  {},
  [1],
  { t: 'hello' },
];

export const mutationArb = fc.record({
  kind: fc.constantFrom('delete', 'retype', 'truncate', 'insert', 'text-insert', 'text-truncate'),
  pick: fc.nat(),
  cut: fc.nat(),
  other: fc.constantFrom(...OTHER_TYPES),
  key: fc.oneof(fc.constantFrom(...FIELDS), fc.string({ maxLength: 5 })),
  json: fc.jsonValue({ maxDepth: 3 }),
});
export type Mutation = typeof mutationArb extends fc.Arbitrary<infer M> ? M : never;

/** Applies one mutation to a valid frame and returns the text to decode. */
export function mutate(frame: unknown, m: Mutation): string {
  const text = encodeFrame(frame);
  const root = JSON.parse(text) as unknown;
  const all = nodes(root);
  const inner = all.slice(1);
  switch (m.kind) {
    case 'delete': {
      const { path } = inner[m.pick % inner.length]!;
      const parent = parentOf(root, path);
      const k = path[path.length - 1]!;
      if (Array.isArray(parent)) parent.splice(Number(k), 1);
      else delete parent[k];
      return encodeFrame(root);
    }
    case 'retype': {
      const { path } = inner[m.pick % inner.length]!;
      parentOf(root, path)[path[path.length - 1]!] = m.other;
      return encodeFrame(root);
    }
    case 'truncate': {
      const strings = inner.filter((n) => typeof n.value === 'string');
      if (strings.length === 0) return text.slice(0, m.cut % (text.length + 1));
      const { path, value } = strings[m.pick % strings.length]!;
      const s = value as string;
      parentOf(root, path)[path[path.length - 1]!] = s.slice(0, m.cut % (s.length + 1));
      return encodeFrame(root);
    }
    case 'insert': {
      const { path, value } = all[m.pick % all.length]!;
      if (Array.isArray(value)) value.splice(m.cut % (value.length + 1), 0, m.json);
      else if (value !== null && typeof value === 'object') (value as Container)[m.key] = m.json;
      else parentOf(root, path)[path[path.length - 1]!] = m.json;
      return encodeFrame(root);
    }
    case 'text-insert': {
      const at = m.cut % (text.length + 1);
      return text.slice(0, at) + JSON.stringify(m.json) + text.slice(at);
    }
    case 'text-truncate':
      return text.slice(0, m.cut % (text.length + 1));
  }
}
