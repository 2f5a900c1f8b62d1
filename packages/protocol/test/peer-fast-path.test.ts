/**
 * The hand-written check of hot peer frames (src/peer-fast-path.ts) against the schema it stands
 * in for: it vouches for every valid hot frame, and never for a frame that PeerFrameSchema refuses
 * or would output changed (unknown keys stripped), whatever is broken in it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PeerFrameSchema, decodePeerFrame, encodeFrame } from '../src/index.js';
import { fastPeerFrame } from '../src/peer-fast-path.js';
import { hotPeerFrameArb, peerFrameArb } from './arbitraries.js';
import { mutate, mutationArb } from './mutations.js';

/** What Zod makes of `json`: its output, or null when it refuses it. */
function zodOutput(json: unknown): unknown {
  const r = PeerFrameSchema.safeParse(json);
  return r.success ? r.data : null;
}

describe('fastPeerFrame', () => {
  it('vouches for every valid hot frame, as the frame itself, which is what Zod outputs', () => {
    fc.assert(
      fc.property(hotPeerFrameArb, (frame) => {
        const json = JSON.parse(encodeFrame(frame)) as unknown;
        expect(fastPeerFrame(json)).toBe(json);
        expect(zodOutput(json)).toEqual(json);
      }),
      { numRuns: 1500 },
    );
  });

  it('never vouches for a frame Zod refuses or would change, over mutated frames', () => {
    let vouched = 0;
    let declined = 0;
    fc.assert(
      fc.property(fc.oneof(hotPeerFrameArb, peerFrameArb), mutationArb, (frame, m) => {
        let json: unknown;
        try {
          json = JSON.parse(mutate(frame, m));
        } catch {
          return; // not JSON: the codec refuses it before any check
        }
        const fast = fastPeerFrame(json);
        if (fast === null) {
          declined++;
          return;
        }
        vouched++;
        expect(fast).toBe(json);
        expect(zodOutput(json)).toEqual(json);
      }),
      { numRuns: 4000 },
    );
    // Both outcomes must be common, or the property says little.
    expect(vouched).toBeGreaterThan(150); // about 290 of 4,000 (mutations that keep a frame valid)
    expect(declined).toBeGreaterThan(1000);
  });

  const req = {
    ts: 5,
    id: { replica: 1, eventNo: 2 },
    op: 'kv.put',
    args: { key: 'k', value: 1 },
    strong: false,
    causalCtx: { '0': [3], '1': [2, 5] },
    session: { id: 'session-1', seq: 4, acked: 3 },
  };
  const push = (q: unknown) => ({ t: 'gossip', msg: { kind: 'push', reqs: [q] } });

  it.each([
    ['an unknown key in a Req', { ...req, extra: 1 }],
    ['an eventNo of 0', { ...req, id: { replica: 1, eventNo: 0 } }],
    ['a ts past the safe integers', { ...req, ts: 2 ** 53 }],
    ['a fractional ts', { ...req, ts: 1.5 }],
    ['an empty op', { ...req, op: '' }],
    ['a session id too short', { ...req, session: { id: 'short', seq: 1, acked: 0 } }],
    ['a session seq of 0', { ...req, session: { id: 'session-1', seq: 0, acked: 0 } }],
    ['a causal context key that is not digits', { ...req, causalCtx: { x: [1] } }],
    ['a causal context with an empty entry', { ...req, causalCtx: { '0': [] } }],
    ['no causalCtx', { ...req, causalCtx: undefined }],
    ['a string for strong', { ...req, strong: 'false' }],
    ['a user without claims', { ...req, user: { id: 'alice' } }],
    ['a user with an empty id', { ...req, user: { id: '', claims: {} } }],
    ['a user whose claims are a list', { ...req, user: { id: 'alice', claims: [1] } }],
    ['an unknown key in a user', { ...req, user: { id: 'a', claims: {}, admin: true } }],
  ])('declines %s, and the decoder answers as Zod does', (_, bad) => {
    const frame = JSON.parse(JSON.stringify(push(bad))) as unknown;
    expect(fastPeerFrame(frame)).toBeNull();
    const zod = zodOutput(frame);
    if (zod === null) expect(decodePeerFrame(encodeFrame(frame)).ok).toBe(false);
    else expect(decodePeerFrame(encodeFrame(frame))).toEqual({ ok: true, frame: zod });
  });

  it('leaves strings that fit only in code points to Zod, which counts them so', () => {
    // 200 astral characters: 400 UTF-16 units, 200 code points (op's limit is 256).
    const op = '\u{1F600}'.repeat(200);
    const frame = push({ ...req, op });
    expect(fastPeerFrame(frame)).toBeNull();
    expect(decodePeerFrame(encodeFrame(frame))).toEqual({ ok: true, frame });
  });

  it('leaves a batch with a membership change, and a batch with a transfer frame, to Zod', () => {
    const reconfig = {
      t: 'paxos',
      msg: {
        type: 'accept',
        ballot: 1,
        instance: 2,
        value: [{ reconfig: { change: { op: 'remove', id: 2 }, nonce: 'n' } }],
      },
    };
    const transfer = { t: 'transfer', msg: { type: 'refuse', session: 1 } };
    for (const frame of [reconfig, { t: 'batch', frames: [push(req), transfer] }]) {
      expect(fastPeerFrame(frame)).toBeNull();
      expect(decodePeerFrame(encodeFrame(frame))).toEqual({ ok: true, frame });
    }
  });

  it('declines a batch over the schema’s 10,000 frames', () => {
    const accepted = { t: 'paxos', msg: { type: 'accepted', ballot: 1, instance: 1 } };
    const frame = { t: 'batch', frames: Array.from({ length: 10_001 }, () => accepted) };
    expect(fastPeerFrame(frame)).toBeNull();
    expect(zodOutput(frame)).toBeNull();
    expect(fastPeerFrame({ ...frame, frames: frame.frames.slice(1) })).not.toBeNull();
  });
});
