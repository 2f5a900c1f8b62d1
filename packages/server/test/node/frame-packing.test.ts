import { describe, expect, it } from 'vitest';
import { packFrames } from '../../src/node/frame-packing.js';

describe('packing peer messages into frames', () => {
  const msg = (n: number, ch = 'x'): string => `{"m":"${ch.repeat(n)}"}`;

  it('one message goes alone; several go as one batch frame while they fit', () => {
    expect(packFrames([msg(3)], 1000).frames).toEqual([msg(3)]);
    const { frames } = packFrames([msg(3), msg(4)], 1000);
    expect(frames).toEqual([`{"t":"batch","frames":[${msg(3)},${msg(4)}]}`]);
  });

  it('splits a turn that would cross the limit, keeping order, every frame within it', () => {
    const parts = Array.from({ length: 50 }, (_, i) => msg(100 + i));
    const { frames, oversized } = packFrames(parts, 4096);
    expect(oversized).toBe(0);
    expect(frames.length).toBeGreaterThan(1);
    for (const f of frames) expect(Buffer.byteLength(f)).toBeLessThanOrEqual(4096);
    const back = frames.flatMap((f) =>
      f.startsWith('{"t":"batch"')
        ? (JSON.parse(f) as { frames: unknown[] }).frames.map((x) => JSON.stringify(x))
        : [f],
    );
    expect(back).toEqual(parts);
  });

  it('leaves out a message over the limit by itself, counted, and sends the rest', () => {
    const { frames, oversized } = packFrames([msg(10), msg(5000), msg(11)], 4096);
    expect(oversized).toBe(1);
    expect(frames).toEqual([`{"t":"batch","frames":[${msg(10)},${msg(11)}]}`]);
  });

  it('measures bytes, not characters, near the limit', () => {
    // 1,500 three-byte characters: 4,500 bytes in 1,509 characters.
    expect(packFrames([msg(1500, '€')], 4096).oversized).toBe(1);
    expect(packFrames([msg(1300, '€')], 4096).frames).toHaveLength(1);
  });
});
