/**
 * The codec: every frame type round-trips through encodeFrame and its decoder, and every way a
 * frame can be wrong comes back as `{ ok: false, code: 'bad-frame' }` with a message that names
 * the offending field — never as an exception.
 */
import { describe, expect, it } from 'vitest';
import {
  MAX_FRAME_BYTES,
  MAX_NESTING,
  PEER_PROTOCOL_VERSION,
  PROTOCOL_VERSION,
  decodeClientFrame,
  decodePeerFrame,
  decodeServerFrame,
  encodeFrame,
} from '../src/index.js';
import type { ClientFrame, Decoded, PeerFrame, ServerFrame, WireReq } from '../src/index.js';

/** Node's Buffer, without pulling Node's types into this browser-safe package. */
const NodeBuffer = (globalThis as unknown as { Buffer: { from(s: string): Uint8Array } }).Buffer;
const utf8 = (s: string) => new TextEncoder().encode(s);

const NONCE = '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';
const MAC = '3a6eb0790f39ac87c94f3856b2dd2c5d110e6811602261a9a923d3bb23adc8b7';

const req = (eventNo: number, strong = false): WireReq => ({
  ts: 1_700_000_000_000 + eventNo,
  id: { replica: 1, eventNo },
  op: 'cart.add',
  args: { cartId: 'u-17', item: { sku: 'SKU-9931', qty: 2, note: 'gift — wrap it ✓' } },
  strong,
  causalCtx: strong ? null : { '0': [12], '1': [eventNo - 1], '2': [7, 9, 10] },
});
const batch = [
  { id: { replica: 0, eventNo: 41 }, prevStrong: 3 },
  { id: { replica: 2, eventNo: 17 }, prevStrong: 3 },
];

const clientFrames: [string, ClientFrame][] = [
  ['hello with a token', { t: 'hello', version: PROTOCOL_VERSION, token: 'tok_8Jd2kLq9' }],
  ['hello without a token', { t: 'hello', version: PROTOCOL_VERSION }],
  [
    'invoke (strong, object args)',
    {
      t: 'invoke',
      opId: 'c-4f1e:42',
      op: 'cart.add',
      args: { cartId: 'u-17', item: { sku: 'SKU-9931', qty: 2 }, tags: ['gift', null, true, 1.5] },
      level: 'strong',
    },
  ],
  [
    'invoke (strong, stable view only)',
    { t: 'invoke', opId: 's', op: 'kv.get', args: { key: 'k' }, level: 'strong', tentative: false },
  ],
  [
    'invoke (weak, null args)',
    { t: 'invoke', opId: 'x', op: 'cart.get', args: null, level: 'weak' },
  ],
  [
    'invoke (unicode strings)',
    { t: 'invoke', opId: 'ü-😀-1', op: 'notes.put', args: 'héllo, 世界 😀', level: 'weak' },
  ],
];

const serverFrames: [string, ServerFrame][] = [
  [
    'welcome',
    {
      t: 'welcome',
      version: PROTOCOL_VERSION,
      replica: 2,
      levels: ['weak', 'strong'],
      ops: ['cart.add', 'cart.get', 'cart.checkout'],
    },
  ],
  [
    'tentative view',
    {
      t: 'view',
      opId: 'c-4f1e:42',
      level: 'tentative',
      outcome: { ok: true, value: { items: [{ sku: 'SKU-9931', qty: 2 }], total: 1998 } },
      id: null,
    },
  ],
  [
    'stable view with an id',
    {
      t: 'view',
      opId: 'c-4f1e:42',
      level: 'stable',
      outcome: { ok: true, value: { items: [{ sku: 'SKU-9931', qty: 2 }], total: 1998 } },
      id: { replica: 2, eventNo: 1041 },
    },
  ],
  [
    'failed view',
    {
      t: 'view',
      opId: 'c-4f1e:43',
      level: 'stable',
      outcome: { ok: false, error: 'out of stock: SKU-9931' },
      id: { replica: 0, eventNo: 7 },
    },
  ],
  ['confirm', { t: 'confirm', opId: 'c-4f1e:42' }],
  [
    'error about an op',
    { t: 'error', opId: 'c-4f1e:44', code: 'busy', message: 'too many in flight; wait' },
  ],
  ['error about the connection', { t: 'error', code: 'version', message: 'upgrade the client' }],
];

/** A configuration that removed replica 2 (a `retired` message carries it). */
const retiredEntry = {
  from: 33,
  members: [
    { id: 0, address: 'ws://127.0.0.1:7100' },
    { id: 1, address: 'ws://127.0.0.1:7101' },
  ],
  retired: [2],
  nonce: 'remove-2',
};

const peerFrames: [string, PeerFrame][] = [
  ['challenge', { t: 'challenge', version: PEER_PROTOCOL_VERSION, nonce: NONCE }],
  ['auth', { t: 'auth', from: 1, mac: MAC, nonce: NONCE }],
  ['welcome', { t: 'welcome', replica: 0, mac: MAC }],
  ['gossip push of one Req', { t: 'gossip', msg: { kind: 'push', reqs: [req(5)] } }],
  [
    'gossip push of three Reqs',
    { t: 'gossip', msg: { kind: 'push', reqs: [req(5), req(6, true), req(7)] } },
  ],
  [
    'gossip summary',
    { t: 'gossip', msg: { kind: 'summary', seen: { '0': [12], '1': [30, 32, 33] }, reply: true } },
  ],
  [
    'gossip summary with wanted ids',
    {
      t: 'gossip',
      msg: { kind: 'summary', seen: {}, reply: false, wanted: [{ replica: 2, eventNo: 4 }] },
    },
  ],
  [
    'gossip pull',
    {
      t: 'gossip',
      msg: {
        kind: 'pull',
        ids: [
          { replica: 1, eventNo: 31 },
          { replica: 2, eventNo: 9 },
        ],
      },
    },
  ],
  ['gossip gone', { t: 'gossip', msg: { kind: 'gone', ids: [{ replica: 1, eventNo: 31 }] } }],
  ['paxos forward', { t: 'paxos', msg: { type: 'forward', casts: batch } }],
  ['paxos retired', { t: 'paxos', msg: { type: 'retired', entry: retiredEntry } }],
  [
    'paxos retired, past a truncation point',
    { t: 'paxos', msg: { type: 'retired', entry: retiredEntry, truncatedBelow: 40 } },
  ],
  ['paxos prepare', { t: 'paxos', msg: { type: 'prepare', ballot: 7, from: 120 } }],
  [
    'paxos promise',
    {
      t: 'paxos',
      msg: {
        type: 'promise',
        ballot: 7,
        accepted: [{ instance: 121, ballot: 4, value: batch }],
        decided: [{ instance: 120, value: batch.slice(0, 1) }],
        truncatedBelow: 100,
      },
    },
  ],
  ['paxos nack', { t: 'paxos', msg: { type: 'nack', ballot: 7, promised: 9 } }],
  ['paxos accept', { t: 'paxos', msg: { type: 'accept', ballot: 7, instance: 122, value: batch } }],
  [
    'paxos accept of an empty batch',
    { t: 'paxos', msg: { type: 'accept', ballot: 7, instance: 123, value: [] } },
  ],
  ['paxos accepted', { t: 'paxos', msg: { type: 'accepted', ballot: 7, instance: 122 } }],
  [
    'paxos heartbeat',
    {
      t: 'paxos',
      msg: {
        type: 'heartbeat',
        ballot: 7,
        leading: true,
        quorate: true,
        decidedBelow: 122,
        deliveredBelow: 120,
        promised: 7,
        knownBelow: 124,
      },
    },
  ],
  ['paxos catchup', { t: 'paxos', msg: { type: 'catchup', from: 90 } }],
  ['paxos readIndex', { t: 'paxos', msg: { type: 'readIndex', nonces: ['17.1', '17.2'] } }],
  [
    "paxos readIndex with its sender's ack",
    { t: 'paxos', msg: { type: 'readIndex', nonces: ['17.3'], promised: 7 } },
  ],
  ['paxos readProbe', { t: 'paxos', msg: { type: 'readProbe', ballot: 7, seq: 3 } }],
  ['paxos readAck', { t: 'paxos', msg: { type: 'readAck', ballot: 7, seq: 3 } }],
  ['paxos readIndexed', { t: 'paxos', msg: { type: 'readIndexed', nonces: ['17.1'], index: 122 } }],
  [
    'paxos decisions',
    {
      t: 'paxos',
      msg: {
        type: 'decisions',
        entries: [
          { instance: 90, value: batch },
          { instance: 91, value: [] },
        ],
        truncatedBelow: 90,
      },
    },
  ],
  ['error', { t: 'error', code: 'unauthorized', message: 'bad MAC from replica 1' }],
];

/** Asserts a rejection and returns its message. */
function rejected<T>(r: Decoded<T>): string {
  expect(r.ok).toBe(false);
  if (r.ok) throw new Error('unreachable');
  expect(r.code).toBe('bad-frame');
  expect(typeof r.message).toBe('string');
  return r.message;
}

/** Asserts that the decoder refused `frame` and named `path` as the offending field. */
function expectFieldError<T>(decode: (d: unknown) => Decoded<T>, frame: unknown, path: string) {
  const message = rejected(decode(typeof frame === 'string' ? frame : JSON.stringify(frame)));
  expect(message).toContain(`invalid frame: ${path}:`);
}

describe('round trips', () => {
  it.each(clientFrames)('client frame: %s', (_, frame) => {
    expect(decodeClientFrame(encodeFrame(frame))).toEqual({ ok: true, frame });
    expect(decodeClientFrame(utf8(encodeFrame(frame)))).toEqual({ ok: true, frame });
  });
  it.each(serverFrames)('server frame: %s', (_, frame) => {
    expect(decodeServerFrame(encodeFrame(frame))).toEqual({ ok: true, frame });
    expect(decodeServerFrame(utf8(encodeFrame(frame)))).toEqual({ ok: true, frame });
  });
  it.each(peerFrames)('peer frame: %s', (_, frame) => {
    expect(decodePeerFrame(encodeFrame(frame))).toEqual({ ok: true, frame });
    expect(decodePeerFrame(utf8(encodeFrame(frame)))).toEqual({ ok: true, frame });
  });

  it('covers every frame type and message kind of the schemas', () => {
    const tags = (frames: [string, { t: string; msg?: object }][]) =>
      new Set(
        frames.map(([, f]) => {
          const msg = f.msg as { kind?: string; type?: string } | undefined;
          return [f.t, msg?.kind ?? msg?.type].filter(Boolean).join('.');
        }),
      );
    expect(tags(clientFrames)).toEqual(new Set(['hello', 'invoke']));
    expect(tags(serverFrames)).toEqual(new Set(['welcome', 'view', 'confirm', 'error']));
    expect(tags(peerFrames)).toEqual(
      new Set(
        ['challenge', 'auth', 'welcome', 'error']
          .concat(['push', 'summary', 'pull', 'gone'].map((k) => `gossip.${k}`))
          .concat(
            [
              'forward',
              'prepare',
              'promise',
              'nack',
              'accept',
              'accepted',
              'heartbeat',
              'catchup',
              'decisions',
              'readIndex',
              'readProbe',
              'readAck',
              'readIndexed',
              'retired',
            ].map((k) => `paxos.${k}`),
          ),
      ),
    );
  });

  it('decodes a Buffer and a Uint8Array view at an offset like the string', () => {
    const text = encodeFrame(peerFrames[3]![1]);
    const expected = decodePeerFrame(text);
    expect(expected.ok).toBe(true);
    expect(decodePeerFrame(NodeBuffer.from(text))).toEqual(expected);
    const padded = utf8(`xxx${text}yyy`);
    expect(decodePeerFrame(padded.subarray(3, padded.length - 3))).toEqual(expected);
  });

  it('keeps lone surrogates, which JSON.stringify escapes, on the string and bytes paths', () => {
    const frame: ClientFrame = {
      t: 'invoke',
      opId: 'a\ud800b',
      op: 'x',
      args: '\udfff',
      level: 'weak',
    };
    expect(decodeClientFrame(encodeFrame(frame))).toEqual({ ok: true, frame });
    expect(decodeClientFrame(utf8(encodeFrame(frame)))).toEqual({ ok: true, frame });
  });

  it('strips fields the schema does not declare', () => {
    const r = decodeClientFrame('{"t":"hello","version":1,"admin":true}');
    expect(r).toEqual({ ok: true, frame: { t: 'hello', version: 1 } });
  });

  it('accepts whitespace around the JSON and integer-valued number forms', () => {
    expect(decodePeerFrame(` \n{"t":"welcome","replica":2.0,"mac":"${MAC}"}\t`)).toEqual({
      ok: true,
      frame: { t: 'welcome', replica: 2, mac: MAC },
    });
    expect(decodePeerFrame(`{"t":"welcome","replica":1e3,"mac":"${MAC}"}`)).toEqual({
      ok: true,
      frame: { t: 'welcome', replica: 1000, mac: MAC },
    });
  });
});

describe('rejections', () => {
  const invoke = { t: 'invoke', opId: 'c-1', op: 'cart.add', args: { qty: 1 }, level: 'weak' };
  const accept = { t: 'paxos', msg: { type: 'accept', ballot: 3, instance: 10, value: batch } };

  describe('wrong types', () => {
    it.each([
      ['opId', { ...invoke, opId: 42 }],
      ['op', { ...invoke, op: ['cart.add'] }],
      ['level', { ...invoke, level: 'eventual' }],
      ['level', { ...invoke, level: null }],
      // Only `false` means anything (absent: tentative views are sent).
      ['tentative', { ...invoke, level: 'strong', tentative: true }],
      ['args', { ...invoke, args: undefined }],
    ])('invoke: %s', (path, frame) => expectFieldError(decodeClientFrame, frame, path));

    it.each([
      ['version', { t: 'hello', version: '1' }],
      ['version', { t: 'hello', version: true }],
      ['token', { t: 'hello', version: 1, token: 12345 }],
      ['token', { t: 'hello', version: 1, token: 'x'.repeat(4097) }],
    ])('hello: %s', (path, frame) => expectFieldError(decodeClientFrame, frame, path));

    it.each([
      ['nonce', { t: 'challenge', version: 1, nonce: NONCE.slice(1) }],
      ['nonce', { t: 'challenge', version: 1, nonce: 64 }],
      ['mac', { t: 'auth', from: 1, mac: MAC + '0', nonce: NONCE }],
      ['from', { t: 'auth', from: '1', mac: MAC, nonce: NONCE }],
      ['nonce', { t: 'auth', from: 1, mac: MAC, nonce: NONCE.slice(2) }],
      ['replica', { t: 'welcome', replica: '0', mac: MAC }],
      ['mac', { t: 'welcome', replica: 0, mac: 'x' }],
      ['msg', { t: 'gossip', msg: 'push' }],
      ['msg.reqs', { t: 'gossip', msg: { kind: 'push', reqs: req(1) } }],
      [
        'msg.reqs.0.strong',
        { t: 'gossip', msg: { kind: 'push', reqs: [{ ...req(1), strong: 1 }] } },
      ],
      ['msg.reqs.0.op', { t: 'gossip', msg: { kind: 'push', reqs: [{ ...req(1), op: '' }] } }],
      [
        'msg.reqs.0.causalCtx.1',
        { t: 'gossip', msg: { kind: 'push', reqs: [{ ...req(1), causalCtx: { '1': 5 } }] } },
      ],
      ['msg.seen.1', { t: 'gossip', msg: { kind: 'summary', seen: { '1': [] }, reply: false } }],
      ['msg.seen.r1', { t: 'gossip', msg: { kind: 'summary', seen: { r1: [1] }, reply: false } }],
      ['msg.reply', { t: 'gossip', msg: { kind: 'summary', seen: {}, reply: 'yes' } }],
      ['msg.value', { ...accept, msg: { ...accept.msg, value: batch[0] } }],
      [
        'msg.value.1.prevStrong',
        { ...accept, msg: { ...accept.msg, value: [batch[0], { id: batch[1]!.id }] } },
      ],
      [
        'msg.leading',
        {
          t: 'paxos',
          msg: {
            type: 'heartbeat',
            ballot: 1,
            leading: 1,
            quorate: true,
            decidedBelow: 0,
            deliveredBelow: 0,
          },
        },
      ],
      ['code', { t: 'error', code: 7, message: 'x' }],
      ...[-1, 1.5, '40', null].map((bad): [string, unknown] => [
        'msg.truncatedBelow',
        { t: 'paxos', msg: { type: 'retired', entry: retiredEntry, truncatedBelow: bad } },
      ]),
    ])('peer: %s', (path, frame) => expectFieldError(decodePeerFrame, frame, path));

    it.each([
      ['outcome', { t: 'view', opId: 'a', level: 'stable', outcome: { ok: 'yes' }, id: null }],
      [
        'id',
        { t: 'view', opId: 'a', level: 'stable', outcome: { ok: true, value: 1 }, id: 'r0:1' },
      ],
      ['code', { t: 'error', code: 'teapot', message: 'x' }],
      ['levels.0', { t: 'welcome', version: 1, replica: 0, levels: ['causal'], ops: [] }],
    ])('server: %s', (path, frame) => expectFieldError(decodeServerFrame, frame, path));

    it('refuses JSON that is not an object', () => {
      for (const text of ['null', '[]', '"hello"', '42', 'true']) {
        expect(rejected(decodeClientFrame(text))).toContain('invalid frame: frame:');
        expect(rejected(decodePeerFrame(text))).toContain('invalid frame: frame:');
      }
    });
  });

  describe('missing fields', () => {
    const without = (o: Record<string, unknown>, k: string) => {
      const copy = { ...o };
      delete copy[k];
      return copy;
    };
    it.each(['opId', 'op', 'args', 'level'])('invoke without %s', (k) =>
      expectFieldError(decodeClientFrame, without(invoke, k), k),
    );
    it('hello without version', () =>
      expectFieldError(decodeClientFrame, { t: 'hello' }, 'version'));
    it.each([
      ['mac', { t: 'auth', from: 1, nonce: NONCE }],
      ['nonce', { t: 'auth', from: 1, mac: MAC }],
      ['mac', { t: 'welcome', replica: 1 }],
      ['nonce', { t: 'challenge', version: 1 }],
      ['msg', { t: 'paxos' }],
      ['msg.instance', { t: 'paxos', msg: without(accept.msg, 'instance') }],
      ['msg.value', { t: 'paxos', msg: without(accept.msg, 'value') }],
      ['msg.truncatedBelow', { t: 'paxos', msg: { type: 'decisions', entries: [] } }],
      [
        'msg.reqs.0.causalCtx',
        { t: 'gossip', msg: { kind: 'push', reqs: [without(req(1), 'causalCtx')] } },
      ],
      [
        'msg.reqs.0.id.eventNo',
        { t: 'gossip', msg: { kind: 'push', reqs: [{ ...req(1), id: { replica: 1 } }] } },
      ],
    ])('peer frame without %s', (path, frame) => expectFieldError(decodePeerFrame, frame, path));
    it('view without outcome', () =>
      expectFieldError(
        decodeServerFrame,
        { t: 'view', opId: 'a', level: 'stable', id: null },
        'outcome',
      ));
  });

  describe('unknown or missing t', () => {
    it.each([
      ['unknown t', { t: 'invokee', opId: 'a' }],
      [
        'a server frame sent to a replica',
        { t: 'welcome', version: 1, replica: 0, levels: [], ops: [] },
      ],
      ['a peer frame sent as a client', { t: 'auth', from: 1, mac: MAC }],
      ['no t', { opId: 'a', op: 'x', args: 1, level: 'weak' }],
      ['t of the wrong type', { t: 1 }],
      ['t in the wrong case', { t: 'Hello', version: 1 }],
      ['t naming an Object.prototype member', { t: 'toString' }],
    ])('client: %s', (_, frame) => expectFieldError(decodeClientFrame, frame, 't'));
    it.each([
      ['unknown t', { t: 'gossipp', msg: {} }],
      ['a client frame sent to a replica port', { t: 'hello', version: 1 }],
      ['t naming an Object.prototype member', { t: '__proto__' }],
    ])('peer: %s', (_, frame) => expectFieldError(decodePeerFrame, frame, 't'));
    it('names the discriminator of nested unions', () => {
      expectFieldError(
        decodePeerFrame,
        { t: 'gossip', msg: { kind: 'shove', reqs: [] } },
        'msg.kind',
      );
      expectFieldError(
        decodePeerFrame,
        { t: 'paxos', msg: { type: 'commit', ballot: 1 } },
        'msg.type',
      );
      expectFieldError(decodePeerFrame, { t: 'paxos', msg: {} }, 'msg.type');
    });
  });

  describe('size', () => {
    /** A valid invoke whose JSON text is exactly `length` characters long. */
    function invokeOfLength(length: number): string {
      const empty = encodeFrame({ ...invoke, args: '' });
      return encodeFrame({ ...invoke, args: 'a'.repeat(length - empty.length) });
    }
    it('accepts a frame of exactly MAX_FRAME_BYTES', () => {
      const text = invokeOfLength(MAX_FRAME_BYTES);
      expect(text.length).toBe(MAX_FRAME_BYTES);
      expect(decodeClientFrame(text).ok).toBe(true);
      expect(decodeClientFrame(utf8(text)).ok).toBe(true);
    });
    it('refuses a frame one byte over, as text and as bytes', () => {
      const text = invokeOfLength(MAX_FRAME_BYTES + 1);
      for (const data of [text, utf8(text)]) {
        const message = rejected(decodeClientFrame(data));
        expect(message).toContain(`exceeds the limit of ${MAX_FRAME_BYTES}`);
      }
    });
    it('refuses a huge frame before parsing it, even when it is not JSON', () => {
      expect(rejected(decodePeerFrame('{'.repeat(4 * MAX_FRAME_BYTES)))).toContain(
        'exceeds the limit',
      );
    });
  });

  describe('not JSON', () => {
    it.each([
      ['empty', ''],
      ['whitespace', '   '],
      ['truncated', '{"t":"hello","version":1'],
      ['single quotes', "{'t':'hello','version':1}"],
      ['trailing garbage', '{"t":"hello","version":1} x'],
      ['two frames', '{"t":"hello","version":1}{"t":"hello","version":1}'],
      ['NaN', '{"t":"hello","version":NaN}'],
      ['comment', '{"t":"hello",/* v */"version":1}'],
      ['plain text', 'hello'],
      ['byte-order mark in a string', '\ufeff{"t":"hello","version":1}'],
    ])('%s', (_, text) => {
      expect(rejected(decodeClientFrame(text))).toBe('frame is not valid JSON');
      expect(rejected(decodePeerFrame(text))).toBe('frame is not valid JSON');
    });
    it('as bytes too', () => {
      expect(rejected(decodeClientFrame(utf8('{"t":')))).toBe('frame is not valid JSON');
      expect(rejected(decodePeerFrame(NodeBuffer.from('\u0000')))).toBe('frame is not valid JSON');
      expect(rejected(decodePeerFrame(new Uint8Array(0)))).toBe('frame is not valid JSON');
    });
  });

  describe('bytes input (Buffer or Uint8Array) is read as UTF-8 JSON text', () => {
    it('refuses an invalid frame given as a Buffer, naming the field', () => {
      const message = rejected(
        decodeClientFrame(NodeBuffer.from(JSON.stringify({ ...invoke, opId: 5 }))),
      );
      expect(message).toContain('invalid frame: opId:');
    });
    it('refuses an invalid frame given as a Uint8Array, naming the field', () => {
      const message = rejected(
        decodePeerFrame(utf8(JSON.stringify({ t: 'welcome', replica: -1, mac: MAC }))),
      );
      expect(message).toContain('invalid frame: replica:');
    });
    it('refuses random binary (e.g. a msgpack frame)', () => {
      // msgpack of { t: 'hello', version: 1 }
      const msgpack = new Uint8Array([0x82, 0xa1, 0x74, 0xa5, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0xa7]);
      // 0x82 cannot start a UTF-8 sequence: refused before JSON parsing.
      expect(rejected(decodeClientFrame(msgpack))).toBe('frame is not valid UTF-8');
    });
    it('skips a UTF-8 byte-order mark (TextDecoder does)', () => {
      const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...utf8('{"t":"hello","version":1}')]);
      expect(decodeClientFrame(bom)).toEqual({ ok: true, frame: { t: 'hello', version: 1 } });
    });
  });

  describe('neither a string nor bytes', () => {
    const data = new TextEncoder().encode('{"t":"hello","version":1}');
    it.each([
      ['a number', 42],
      ['an already-parsed object', { t: 'hello', version: 1 }],
      ['null', null],
      ['undefined', undefined],
      ['a boolean', true],
      ['an ArrayBuffer', data.buffer],
      ['a DataView', new DataView(data.buffer)],
      ['an array of byte chunks', [data]],
      ['a String object', new String('{"t":"hello","version":1}')],
    ])('%s', (_, input) => {
      expect(rejected(decodeClientFrame(input))).toBe('frames must be JSON text');
      expect(rejected(decodeServerFrame(input))).toBe('frames must be JSON text');
      expect(rejected(decodePeerFrame(input))).toBe('frames must be JSON text');
    });
  });

  describe('ids and ballots: negative, fractional or unsafe integers', () => {
    const oneReq = (id: unknown, ts: unknown = 1) => ({
      t: 'gossip',
      msg: { kind: 'push', reqs: [{ ...req(1), id, ts }] },
    });
    const batchOf = (id: unknown, prevStrong: unknown = 0) => ({
      t: 'paxos',
      msg: { type: 'accept', ballot: 1, instance: 1, value: [{ id, prevStrong }] },
    });
    it.each([
      ['msg.reqs.0.id.replica', oneReq({ replica: -1, eventNo: 1 })],
      ['msg.reqs.0.id.replica', oneReq({ replica: 0.5, eventNo: 1 })],
      ['msg.reqs.0.id.eventNo', oneReq({ replica: 0, eventNo: 0 })],
      ['msg.reqs.0.id.eventNo', oneReq({ replica: 0, eventNo: -3 })],
      ['msg.reqs.0.id.eventNo', oneReq({ replica: 0, eventNo: 2.5 })],
      ['msg.reqs.0.id.eventNo', oneReq({ replica: 0, eventNo: 2 ** 53 })],
      ['msg.reqs.0.ts', oneReq({ replica: 0, eventNo: 1 }, -1)],
      ['msg.reqs.0.ts', oneReq({ replica: 0, eventNo: 1 }, 1.25)],
      [
        'msg.ids.0.eventNo',
        { t: 'gossip', msg: { kind: 'pull', ids: [{ replica: 1, eventNo: -1 }] } },
      ],
      ['msg.seen.0.0', { t: 'gossip', msg: { kind: 'summary', seen: { '0': [-1] }, reply: true } }],
      [
        'msg.seen.0.1',
        { t: 'gossip', msg: { kind: 'summary', seen: { '0': [1, 1.5] }, reply: true } },
      ],
      ['msg.value.0.id.replica', batchOf({ replica: -2, eventNo: 1 })],
      ['msg.value.0.id.eventNo', batchOf({ replica: 2, eventNo: 0.1 })],
      ['msg.value.0.prevStrong', batchOf({ replica: 2, eventNo: 1 }, -1)],
      ['msg.value.0.prevStrong', batchOf({ replica: 2, eventNo: 1 }, 0.5)],
      ['msg.ballot', { t: 'paxos', msg: { type: 'prepare', ballot: -1, from: 0 } }],
      ['msg.ballot', { t: 'paxos', msg: { type: 'prepare', ballot: 1.5, from: 0 } }],
      ['msg.from', { t: 'paxos', msg: { type: 'prepare', ballot: 1, from: -1 } }],
      ['msg.ballot', { t: 'paxos', msg: { type: 'accepted', ballot: -0.5, instance: 1 } }],
      ['msg.instance', { t: 'paxos', msg: { type: 'accepted', ballot: 1, instance: -1 } }],
      ['msg.promised', { t: 'paxos', msg: { type: 'nack', ballot: 1, promised: -4 } }],
      ['msg.promised', { t: 'paxos', msg: { type: 'nack', ballot: 1, promised: 1e300 } }],
      [
        'msg.accepted.0.ballot',
        {
          t: 'paxos',
          msg: {
            type: 'promise',
            ballot: 2,
            accepted: [{ instance: 1, ballot: -1, value: [] }],
            decided: [],
            truncatedBelow: 0,
          },
        },
      ],
      [
        'msg.decided.0.instance',
        {
          t: 'paxos',
          msg: {
            type: 'promise',
            ballot: 2,
            accepted: [],
            decided: [{ instance: 0.5, value: [] }],
            truncatedBelow: 0,
          },
        },
      ],
      [
        'msg.truncatedBelow',
        { t: 'paxos', msg: { type: 'decisions', entries: [], truncatedBelow: -1 } },
      ],
      [
        'msg.decidedBelow',
        {
          t: 'paxos',
          msg: {
            type: 'heartbeat',
            ballot: 1,
            leading: false,
            quorate: false,
            decidedBelow: -1,
            deliveredBelow: 0,
          },
        },
      ],
      ['msg.from', { t: 'paxos', msg: { type: 'catchup', from: 3.5 } }],
      // Read index (cab/read-index.ts): malformed and oversized.
      ['msg.nonces', { t: 'paxos', msg: { type: 'readIndex', nonces: 'x' } }],
      ['msg.nonces.0', { t: 'paxos', msg: { type: 'readIndex', nonces: [''] } }],
      ['msg.nonces.0', { t: 'paxos', msg: { type: 'readIndex', nonces: ['n'.repeat(65)] } }],
      [
        'msg.nonces',
        { t: 'paxos', msg: { type: 'readIndex', nonces: Array.from({ length: 4097 }, () => 'n') } },
      ],
      ['msg.promised', { t: 'paxos', msg: { type: 'readIndex', nonces: ['n'], promised: -1 } }],
      ['msg.seq', { t: 'paxos', msg: { type: 'readProbe', ballot: 1, seq: 1.5 } }],
      ['msg.ballot', { t: 'paxos', msg: { type: 'readAck', ballot: -1, seq: 0 } }],
      ['msg.index', { t: 'paxos', msg: { type: 'readIndexed', nonces: ['n'], index: -1 } }],
      ['from', { t: 'auth', from: -1, mac: MAC, nonce: NONCE }],
      ['replica', { t: 'welcome', replica: 1.5, mac: MAC }],
      ['version', { t: 'challenge', version: 1.5, nonce: NONCE }],
    ])('peer %s', (path, frame) => expectFieldError(decodePeerFrame, frame, path));

    it('refuses a number too large for JSON (parsed as Infinity)', () =>
      expectFieldError(decodePeerFrame, '{"t":"welcome","replica":1e400}', 'replica'));

    it.each([
      ['id.replica', { replica: -1, eventNo: 1 }],
      ['id.eventNo', { replica: 1, eventNo: 0 }],
      ['id.eventNo', { replica: 1, eventNo: 1.5 }],
    ])('server view %s', (path, id) =>
      expectFieldError(
        decodeServerFrame,
        { t: 'view', opId: 'a', level: 'stable', outcome: { ok: true, value: 1 }, id },
        path,
      ),
    );
    it('server welcome with a negative replica', () =>
      expectFieldError(
        decodeServerFrame,
        { t: 'welcome', version: 1, replica: -1, levels: [], ops: [] },
        'replica',
      ));
    it('client hello with a fractional version', () =>
      expectFieldError(decodeClientFrame, { t: 'hello', version: 1.1 }, 'version'));

    it('accepts the largest safe integer and zero where allowed', () => {
      const frame = {
        t: 'paxos',
        msg: { type: 'nack', ballot: 0, promised: Number.MAX_SAFE_INTEGER },
      };
      expect(decodePeerFrame(JSON.stringify(frame))).toEqual({ ok: true, frame });
    });
  });

  describe('opId and op length', () => {
    it('accepts an opId of 128 characters', () => {
      const frame = { ...invoke, opId: 'o'.repeat(128) };
      expect(decodeClientFrame(JSON.stringify(frame))).toEqual({ ok: true, frame });
    });
    it('refuses an opId of 129 characters', () =>
      expectFieldError(decodeClientFrame, { ...invoke, opId: 'o'.repeat(129) }, 'opId'));
    it('refuses a much longer opId', () =>
      expectFieldError(decodeClientFrame, { ...invoke, opId: 'o'.repeat(10_000) }, 'opId'));
    it('counts code points, not UTF-16 units (Zod 4): 128 emoji pass, 129 do not', () => {
      const frame = { ...invoke, opId: '😀'.repeat(128) };
      expect(decodeClientFrame(JSON.stringify(frame))).toEqual({ ok: true, frame });
      expectFieldError(decodeClientFrame, { ...invoke, opId: '😀'.repeat(129) }, 'opId');
    });
    it('refuses an empty opId', () =>
      expectFieldError(decodeClientFrame, { ...invoke, opId: '' }, 'opId'));
    it('refuses an op name longer than 256 or empty', () => {
      expectFieldError(decodeClientFrame, { ...invoke, op: 'o'.repeat(257) }, 'op');
      expectFieldError(decodeClientFrame, { ...invoke, op: '' }, 'op');
    });
  });
});

/**
 * Regressions: bugs these tests found in the decoders, now fixed (nesting depth checked before
 * validation, the size limit in UTF-8 bytes, `__proto__` keys refused, strict UTF-8).
 */
describe('regressions', () => {
  // Was a bug (codec.ts / json-value.ts): `JsonValueSchema` (z.json()) validates recursively, so a
  // deeply nested `args` (about 2,000 levels: a frame of a few KB, far under MAX_FRAME_BYTES)
  // overflows the stack and decodeClientFrame/decodePeerFrame THROW a RangeError instead of
  // returning bad-frame — breaking the "never throw" contract (one such frame can kill a
  // connection handler or the replica process). Fix: cap nesting depth before safeParse (or catch
  // RangeError around it) and return bad-frame.
  it('a deeply nested args value is refused as bad-frame, not thrown', () => {
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    const text = `{"t":"invoke","opId":"a","op":"x","args":${deep},"level":"weak"}`;
    expect(text.length).toBeLessThan(MAX_FRAME_BYTES);
    let r: Decoded<ClientFrame> | undefined;
    expect(() => (r = decodeClientFrame(text))).not.toThrow();
    expect(r && !r.ok && r.code).toBe('bad-frame');
  });
  it('a deeply nested Req args value in a gossip push is refused, not thrown', () => {
    const deep = '{"a":'.repeat(5_000) + '1' + '}'.repeat(5_000);
    const text = `{"t":"gossip","msg":{"kind":"push","reqs":[{"ts":1,"id":{"replica":0,"eventNo":1},"op":"x","args":${deep},"strong":false,"causalCtx":null}]}}`;
    expect(() => decodePeerFrame(text)).not.toThrow();
  });

  // Was a bug (codec.ts): the size check compares `text.length` (UTF-16 code units) with
  // MAX_FRAME_BYTES, and for bytes input it decodes the whole buffer before checking. A frame of
  // 400,000 '€' is 400,059 code units but 1,200,059 UTF-8 bytes (> 1,048,576) and is accepted;
  // up to 3x the byte limit gets through. Fix: for bytes compare `data.byteLength` before decoding;
  // for strings compare the UTF-8 length (or document the limit as code units).
  it('refuses a frame over MAX_FRAME_BYTES in UTF-8 bytes (multi-byte text)', () => {
    const text = encodeFrame({
      ...{ t: 'invoke', opId: 'a', op: 'x', level: 'weak' },
      args: '€'.repeat(400_000),
    });
    expect(utf8(text).length).toBeGreaterThan(MAX_FRAME_BYTES);
    expect(decodeClientFrame(utf8(text)).ok).toBe(false);
  });
  it('refuses a string frame whose UTF-8 encoding exceeds MAX_FRAME_BYTES', () => {
    const text = encodeFrame({
      ...{ t: 'invoke', opId: 'a', op: 'x', level: 'weak' },
      args: '€'.repeat(400_000),
    });
    expect(decodeClientFrame(text).ok).toBe(false);
  });

  // Was a bug (json-value.ts, via Zod 4): Zod's object/record parsing skips `__proto__` keys (to avoid
  // prototype replacement), silently. (1) An invoke whose args hold a "__proto__" key decodes OK
  // with that key dropped: the op runs on different args than the client sent. (2) DvvSchema's key
  // regex /^\d+$/ is never applied to "__proto__", so an invalid DVV is accepted (as {}).
  // Correct: refuse such frames with bad-frame (or keep the key as an own property).
  it('args with a "__proto__" key are refused or kept, never silently altered', () => {
    const text =
      '{"t":"invoke","opId":"a","op":"acl.set","args":{"user":"bob","__proto__":{"admin":true}},"level":"weak"}';
    const r = decodeClientFrame(text);
    if (r.ok) expect(r.frame).toEqual(JSON.parse(text));
    else expect(r.code).toBe('bad-frame');
    if (r.ok) expect(encodeFrame(r.frame)).toBe(text);
  });
  it('a DVV with a "__proto__" key fails its key regex', () => {
    const text = '{"t":"gossip","msg":{"kind":"summary","seen":{"__proto__":[1]},"reply":true}}';
    expect(decodePeerFrame(text).ok).toBe(false);
  });

  // Was a bug (codec.ts, low severity): bytes are decoded with a non-fatal TextDecoder, so invalid
  // UTF-8 is silently replaced by U+FFFD: distinct malformed opIds collapse to the same string
  // (and retries would be matched to the wrong op). JSON text must be UTF-8 (RFC 8259).
  // Correct: `new TextDecoder('utf-8', { fatal: true })` and bad-frame on error.
  it('refuses bytes that are not valid UTF-8', () => {
    const head = utf8('{"t":"invoke","opId":"');
    const tail = utf8('","op":"x","args":null,"level":"weak"}');
    const frame = new Uint8Array([...head, 0xff, ...tail]);
    expect(decodeClientFrame(frame).ok).toBe(false);
  });
});

/**
 * A refused invoke still names its op: the replica answers `bad-frame` with the frame's op id, and
 * the client fails that op instead of leaving its caller waiting (an error frame without an op id
 * names no op).
 */
describe('the op id of a refused frame', () => {
  const invoke = (fields: Record<string, unknown>) =>
    JSON.stringify({
      t: 'invoke',
      opId: 'op-7',
      op: 'kv.get',
      args: null,
      level: 'weak',
      ...fields,
    });
  const opIdOf = (r: Decoded<unknown>) => (r.ok ? 'accepted' : r.opId);

  it('is kept when the frame fails its schema', () => {
    expect(opIdOf(decodeClientFrame(invoke({ op: 'x'.repeat(257) })))).toBe('op-7');
    expect(opIdOf(decodeClientFrame(invoke({ args: undefined })))).toBe('op-7');
    expect(opIdOf(decodeClientFrame(invoke({ level: 'bogus' })))).toBe('op-7');
    expect(opIdOf(decodeClientFrame(invoke({ t: 'nonsense' })))).toBe('op-7');
  });

  it('is kept when the frame is refused for its nesting or a "__proto__" key', () => {
    const deep = JSON.parse('['.repeat(MAX_NESTING) + ']'.repeat(MAX_NESTING)) as unknown;
    expect(opIdOf(decodeClientFrame(invoke({ args: deep })))).toBe('op-7');
    const proto = invoke({}).replace('"args":null', '"args":{"__proto__":{"admin":true}}');
    const r = decodeClientFrame(proto);
    expect(!r.ok && r.message).toMatch(/__proto__/);
    expect(opIdOf(r)).toBe('op-7');
  });

  it('is the limit of what args may nest: one level less than the frame', () => {
    const nested = (n: number) => JSON.parse('['.repeat(n) + ']'.repeat(n)) as unknown;
    expect(decodeClientFrame(invoke({ args: nested(MAX_NESTING - 1) })).ok).toBe(true);
    expect(decodeClientFrame(invoke({ args: nested(MAX_NESTING) })).ok).toBe(false);
  });

  it('is absent when there is none to trust', () => {
    for (const opId of ['', 'x'.repeat(129), 7, null, ['a'], { id: 'a' }])
      expect(opIdOf(decodeClientFrame(invoke({ opId, op: '' })))).toBeUndefined();
    expect(opIdOf(decodeClientFrame(`[${invoke({ op: '' })}]`))).toBeUndefined();
    expect(opIdOf(decodeClientFrame('{"opId":"a",'))).toBeUndefined(); // not JSON
    // Over the size limit the frame is refused unread: its op id is unknown.
    const big = invoke({ args: 'x'.repeat(MAX_FRAME_BYTES) });
    expect(decodeClientFrame(big).ok).toBe(false);
    expect(opIdOf(decodeClientFrame(big))).toBeUndefined();
  });

  it('is kept up to 128 characters, counted in code points as the schema counts them', () => {
    for (const opId of ['é'.repeat(128), '😀'.repeat(128)])
      expect(opIdOf(decodeClientFrame(invoke({ opId, op: '' })))).toBe(opId);
    expect(opIdOf(decodeClientFrame(invoke({ opId: '😀'.repeat(129), op: '' })))).toBeUndefined();
  });
});
