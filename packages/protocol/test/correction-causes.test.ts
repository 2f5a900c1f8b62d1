import { describe, expect, it } from 'vitest';
import { MAX_CAUSE_KEY_CHARS, MAX_CORRECTION_CAUSES, ServerFrameSchema } from '../src/index.js';

/**
 * A view's `causes` (explained corrections) is bounded at the client's edge: a replica, or
 * anything posing as one, cannot make a client take more causes, longer keys or malformed ones.
 */
describe("a view frame's causes", () => {
  const view = (causes: unknown) => ({
    t: 'view',
    opId: 'o1',
    level: 'stable',
    outcome: { ok: true, value: 1 },
    causes,
  });
  const cause = { op: 'bank.withdraw', id: 'r0#12', key: 'bank/alice' };

  it('are taken within their bounds', () => {
    expect(ServerFrameSchema.safeParse(view([cause])).success).toBe(true);
    const most = Array.from({ length: MAX_CORRECTION_CAUSES }, () => cause);
    expect(ServerFrameSchema.safeParse(view(most)).success).toBe(true);
    expect(ServerFrameSchema.safeParse(view(undefined)).success).toBe(true);
  });

  it('are refused when too many, oversized, empty or malformed', () => {
    for (const bad of [
      Array.from({ length: MAX_CORRECTION_CAUSES + 1 }, () => cause),
      [{ ...cause, key: 'k'.repeat(MAX_CAUSE_KEY_CHARS + 1) }],
      [{ ...cause, op: 'o'.repeat(257) }],
      [{ ...cause, id: 'r'.repeat(65) }],
      [],
      [{ op: 'bank.withdraw', key: 'bank/alice' }],
      [{ ...cause, key: 7 }],
      'bank.withdraw',
    ])
      expect(ServerFrameSchema.safeParse(view(bad)).success, JSON.stringify(bad).slice(0, 80)).toBe(
        false,
      );
  });
});
