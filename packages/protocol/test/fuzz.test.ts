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
import { FIELDS, mutate, mutationArb } from './mutations.js';

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
  'batch',
  'readProbe',
  'readAck',
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
