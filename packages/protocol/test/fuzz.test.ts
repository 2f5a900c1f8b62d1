/**
 * Property tests of the decoders: whatever arrives — arbitrary text, arbitrary bytes, near-frames,
 * valid frames with one thing broken — decoding never throws and answers either a frame that
 * re-validates or `bad-frame`; and every valid frame survives encode → decode unchanged.
 *
 * Together the properties run more than 10,000 cases through decodeClientFrame and
 * decodePeerFrame (the last test checks the count); the file takes a few seconds.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ClientFrameSchema,
  PeerFrameSchema,
  ServerFrameSchema,
  decodeClientFrame,
  decodePeerFrame,
  decodeServerFrame,
  encodeFrame,
} from '../src/index.js';
import type { Decoded } from '../src/index.js';
import { clientFrameArb, peerFrameArb, serverFrameArb } from './arbitraries.js';

interface Side {
  name: string;
  decode: (data: unknown) => Decoded<unknown>;
  schema: { safeParse(x: unknown): { success: boolean } };
  frames: fc.Arbitrary<unknown>;
}

const client: Side = {
  name: 'client',
  decode: decodeClientFrame,
  schema: ClientFrameSchema,
  frames: clientFrameArb,
};
const peer: Side = {
  name: 'peer',
  decode: decodePeerFrame,
  schema: PeerFrameSchema,
  frames: peerFrameArb,
};
const server: Side = {
  name: 'server',
  decode: decodeServerFrame,
  schema: ServerFrameSchema,
  frames: serverFrameArb,
};

const utf8 = (s: string) => new TextEncoder().encode(s);

/** Cases run through decodeClientFrame or decodePeerFrame, over the whole file. */
let cases = 0;

/**
 * The contract for any input: no throw; either a frame that passes its schema again and whose
 * encoding is a fixpoint of encode ∘ decode, or a non-empty bad-frame message.
 */
function checkAnyInput(side: Side, data: unknown, count = true): void {
  if (count && side !== server) cases++;
  const r = side.decode(data); // a throw fails the property, with the input shrunk
  if (r.ok) {
    expect(side.schema.safeParse(r.frame).success).toBe(true);
    const text = encodeFrame(r.frame);
    const again = side.decode(text);
    expect(again.ok).toBe(true);
    if (again.ok) expect(encodeFrame(again.frame)).toBe(text);
  } else {
    expect(r.code).toBe('bad-frame');
    expect(r.message.length).toBeGreaterThan(0);
  }
}

/** Every field name and discriminator value of the protocol, plus a few troublemakers. */
const FIELDS = [
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
  'constructor',
  'toString',
  '0',
  '1',
];
const TAGS = [
  'hello',
  'invoke',
  'welcome',
  'view',
  'confirm',
  'error',
  'challenge',
  'auth',
  'gossip',
  'paxos',
  'push',
  'summary',
  'pull',
  'gone',
  'forward',
  'prepare',
  'promise',
  'nack',
  'accept',
  'accepted',
  'heartbeat',
  'catchup',
  'decisions',
  'weak',
  'strong',
  '',
  'toString',
  'constructor',
  'hasOwnProperty',
];

/** Objects built from the protocol's own field names and tags: they get past the first checks. */
const { nearValue } = fc.letrec((tie) => ({
  nearValue: fc.oneof(
    { depthSize: 'small', maxDepth: 4 },
    fc.jsonValue({ maxDepth: 1 }),
    fc.oneof(fc.nat(5), fc.integer({ min: -3, max: 3 }), fc.double()),
    fc.constantFrom(...TAGS),
    fc.array(tie('nearValue'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom(...FIELDS), tie('nearValue'), { maxKeys: 6 }),
  ),
}));
const nearFrameArb = fc
  .tuple(
    fc.constantFrom(...TAGS),
    fc.dictionary(fc.constantFrom(...FIELDS), nearValue, { maxKeys: 6 }),
  )
  .map(([t, rest]) => JSON.stringify({ ...rest, t }));

describe.each([client, peer])('$name decoder on arbitrary input', (side) => {
  it('arbitrary strings', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 200 })),
        (s) => checkAnyInput(side, s),
      ),
      { numRuns: 1500 },
    );
  });

  it('arbitrary byte arrays', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (b) => checkAnyInput(side, b)),
      { numRuns: 1000 },
    );
  });

  it('arbitrary JSON and near-frames, as text and as bytes', () => {
    const text = fc.oneof(
      fc.jsonValue().map((v) => JSON.stringify(v)),
      nearFrameArb,
    );
    fc.assert(
      fc.property(text, fc.boolean(), (s, asBytes) => checkAnyInput(side, asBytes ? utf8(s) : s)),
      { numRuns: 1000 },
    );
  });
});

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

const mutationArb = fc.record({
  kind: fc.constantFrom('delete', 'retype', 'truncate', 'insert', 'text-insert', 'text-truncate'),
  pick: fc.nat(),
  cut: fc.nat(),
  other: fc.constantFrom(...OTHER_TYPES),
  key: fc.oneof(fc.constantFrom(...FIELDS), fc.string({ maxLength: 5 })),
  json: fc.jsonValue({ maxDepth: 3 }),
});
type Mutation = typeof mutationArb extends fc.Arbitrary<infer M> ? M : never;

/** Applies one mutation to a valid frame and returns the text to decode. */
function mutate(frame: unknown, m: Mutation): string {
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

describe.each([
  [client, 1000],
  [peer, 1500],
])('$name decoder on mutated valid frames', (side, numRuns) => {
  it('never throws; answers a re-validating frame or bad-frame, for text and bytes', () => {
    fc.assert(
      fc.property(side.frames, mutationArb, (frame, m) => {
        const text = mutate(frame, m);
        checkAnyInput(side, text);
        checkAnyInput(side, utf8(text), false); // the same case on the bytes path
      }),
      { numRuns },
    );
  });
});

describe.each([
  [client, 500],
  [peer, 1000],
  [server, 300],
])('$name decoder on valid frames', (side, numRuns) => {
  it('decodes every encoded frame to a deep-equal frame, from text and from bytes', () => {
    fc.assert(
      fc.property(side.frames, (frame) => {
        if (side !== server) cases++;
        expect(side.schema.safeParse(frame).success).toBe(true);
        const text = encodeFrame(frame);
        expect(side.decode(text)).toEqual({ ok: true, frame });
        expect(side.decode(utf8(text))).toEqual({ ok: true, frame });
      }),
      { numRuns },
    );
  });
});

it('ran at least 10,000 cases through decodeClientFrame and decodePeerFrame', () => {
  expect(cases).toBeGreaterThanOrEqual(10_000);
});
