import { describe, expect, it } from 'vitest';
import {
  PROFILES,
  PROFILE_NAMES,
  maxRttMs,
  nearestMajorityRttMs,
  oneWayMs,
  profileNamed,
  regionOf,
  rttBetween,
} from '../../src/geo/index.js';

describe('network profiles', () => {
  it('every profile has a symmetric round-trip matrix with a zero diagonal, one row per region', () => {
    for (const name of PROFILE_NAMES) {
      const p = PROFILES[name];
      expect(p.rttMs).toHaveLength(p.regions.length);
      p.rttMs.forEach((row, a) => {
        expect(row).toHaveLength(p.regions.length);
        row.forEach((v, b) => {
          expect(v).toBe(p.rttMs[b]![a]);
          if (a === b) expect(v).toBe(0);
          else expect(v).toBeGreaterThan(0);
        });
      });
    }
  });

  it('places replicas round-robin in regions and names the round trips between them', () => {
    const p = PROFILES['us-eu'];
    expect([0, 1, 2, 3].map((i) => regionOf(p, i))).toEqual([0, 1, 2, 0]);
    expect(rttBetween(p, 0, 1)).toBe(87);
    expect(rttBetween(p, 1, 2)).toBe(130);
    expect(rttBetween(p, 0, 3)).toBe(p.localRttMs);
    expect(rttBetween(p, 2, 2)).toBe(0);
    expect(oneWayMs(p, 0, 2)).toBe(40.5);
    expect(maxRttMs(p, 3)).toBe(130);
    expect(maxRttMs(PROFILES.global, 5)).toBe(330);
  });

  it('bounds a region by its round trip to the nearest majority, itself counted', () => {
    const p = PROFILES['us-eu'];
    // us-east: itself and eu-west (81) make a majority of three.
    expect(nearestMajorityRttMs(p, 0, 3)).toBe(81);
    expect(nearestMajorityRttMs(p, 1, 3)).toBe(87);
    expect(nearestMajorityRttMs(p, 2, 3)).toBe(81);
    // Five regions: a majority is three, so the second-nearest other region.
    expect(nearestMajorityRttMs(PROFILES.global, 0, 5)).toBe(87);
    expect(nearestMajorityRttMs(PROFILES.global, 4, 5)).toBe(146);
  });

  it('names the profiles when asked for one that does not exist', () => {
    expect(profileNamed('global').regions).toHaveLength(5);
    expect(() => profileNamed('us-europe')).toThrow(/lan, us-eu, global/);
  });
});
