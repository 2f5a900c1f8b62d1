import { describe, expect, it } from 'vitest';
import { readStoredSession } from '../src/offline-storage.js';
import { readToken, refreshDelayMs } from '../src/session/user-token.js';

/**
 * What the client reads in a user's token, unverified: the payload of a JWT (RFC 7519: base64url
 * UTF-8 JSON between the first and second dots), and when to ask for a fresh one; and whose a
 * stored session is.
 */
const b64 = (s: string): string => Buffer.from(s).toString('base64url');
const token = (payload: string): string => `${b64('{"alg":"RS256"}')}.${b64(payload)}.c2lnbmF0dXJl`;

describe('readToken', () => {
  it('reads sub, exp (as ms) and every claim, in UTF-8', () => {
    const t = token(JSON.stringify({ sub: 'ève/2', exp: 1_700_000_000, name: 'Zoë 😀', n: [1] }));
    expect(readToken(t)).toEqual({
      sub: 'ève/2',
      expiresAt: 1_700_000_000_000,
      claims: { sub: 'ève/2', exp: 1_700_000_000, name: 'Zoë 😀', n: [1] },
    });
  });

  it('reads payloads of every length (base64url without padding)', () => {
    for (const pad of ['', 'a', 'ab', 'abc']) {
      const claims = { sub: `u${pad}` };
      expect(readToken(token(JSON.stringify(claims)))?.claims).toEqual(claims);
    }
  });

  it('gives no expiry for a token without a numeric exp', () => {
    expect(readToken(token('{"sub":"a"}'))).toMatchObject({ sub: 'a', expiresAt: undefined });
    expect(readToken(token('{"sub":"a","exp":"soon"}'))?.expiresAt).toBeUndefined();
    expect(readToken(token('{"exp":5}'))?.sub).toBeUndefined();
  });

  it('is null for what is not a JWT', () => {
    for (const t of [
      'opaque-token',
      'a.b',
      'a.b.c.d',
      `x.${b64('[1,2]')}.y`,
      `x.${b64('null')}.y`,
      `x.${b64('not json')}.y`,
      'x.a+b/c.y', // base64, not base64url
      `x.${Buffer.from([0xff, 0xfe]).toString('base64url')}.y`, // not UTF-8
    ])
      expect(readToken(t), t).toBeNull();
  });
});

describe('refreshDelayMs', () => {
  it('waits until half the life left, at most a minute before the expiry', () => {
    expect(refreshDelayMs(10_000, 0)).toBe(5_000);
    expect(refreshDelayMs(3_600_000, 0)).toBe(3_540_000);
  });

  it('sets no timer without an expiry, or once expired by this clock', () => {
    expect(refreshDelayMs(undefined, 0)).toBeNull();
    expect(refreshDelayMs(1_000, 1_000)).toBeNull();
    expect(refreshDelayMs(1_000, 5_000)).toBeNull();
  });
});

describe("a stored session's user", () => {
  it('is an id, null (anonymous) or absent (not known): anything else is no stored session', () => {
    const base = { version: 1, session: 's', nextSeq: 1, ops: [] };
    expect(readStoredSession({ ...base, user: 'alice' })).toMatchObject({ user: 'alice' });
    expect(readStoredSession({ ...base, user: null })).toMatchObject({ user: null });
    expect(readStoredSession(base)).toEqual(base);
    expect(readStoredSession({ ...base, user: 42 })).toBe('its user is not a user id');
  });
});
