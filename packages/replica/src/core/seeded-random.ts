import type { OpId } from './op-id.js';

/**
 * The generator behind `tx.random()`: sfc32 seeded from the op id, so every replica that executes
 * the op (or re-executes it) draws the same numbers.
 */
export function opRandom(id: OpId | null, ts: number): () => number {
  let a = id ? id.replica ^ 0x9e3779b9 : 0x85ebca6b;
  let b = id ? id.eventNo : Math.floor(ts / 0x100000000);
  let c = id ? Math.imul(id.eventNo ^ 0xdeadbeef, 0x85ebca6b) : ts | 0;
  let d = 1;
  const next = (): number => {
    a |= 0;
    b |= 0;
    c |= 0;
    d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next(); // mix the seed
  return next;
}
