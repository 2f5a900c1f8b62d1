import { describe, expect, it } from 'vitest';
import { PROFILES, rttBetween } from '../../src/geo/index.js';
import { profileDelays } from '../../src/node/profile-delays.js';

describe('profileDelays: the one-way delay each replica adds towards each other one', () => {
  it('is half the round trip between their regions, the same both ways', () => {
    const us = PROFILES['us-eu'];
    const d = profileDelays(us, [0, 1, 2]);
    expect(d).toHaveLength(6);
    const ms = (from: number, to: number) => d.find((x) => x.from === from && x.to === to)!.ms;
    expect(ms(0, 1)).toBe(43.5); // us-east – us-west: 87 ms round trip
    expect(ms(0, 2)).toBe(40.5); // us-east – eu-west: 81 ms
    expect(ms(1, 2)).toBe(65); // us-west – eu-west: 130 ms
    for (const { from, to } of d)
      expect(ms(from, to) + ms(to, from)).toBe(rttBetween(us, from, to));
  });

  it('places replica i in region i mod regions, and leaves out what is under a millisecond', () => {
    // Replica 3 of us-eu sits in us-east beside replica 0: a LAN round trip (0.5 ms), not added.
    const d = profileDelays(PROFILES['us-eu'], [0, 3]);
    expect(d.map((x) => x.ms)).toEqual([0, 0]);
    expect(profileDelays(PROFILES.lan, [0, 1, 2]).every((x) => x.ms === 0)).toBe(true);
    const global = profileDelays(PROFILES.global, [0, 1, 2, 3, 4]);
    expect(global).toHaveLength(20);
    expect(Math.max(...global.map((x) => x.ms))).toBe(165); // eu-west – ap-southeast: 330 ms
  });

  it('covers only the replicas it is given, added ones included', () => {
    const d = profileDelays(PROFILES.global, [0, 2, 5]);
    expect(d.map((x) => [x.from, x.to])).toEqual([
      [0, 2],
      [0, 5],
      [2, 0],
      [2, 5],
      [5, 0],
      [5, 2],
    ]);
    // Replica 5 of global sits in us-east (5 mod 5 = 0), beside replica 0.
    expect(d.find((x) => x.from === 5 && x.to === 2)!.ms).toBe(40.5);
  });
});
