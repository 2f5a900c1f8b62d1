import { PROFILES } from '@creek/server/geo';
import { describe, expect, it } from 'vitest';
import { defaultReplicas } from '../src/dev-cluster.js';

describe('how many replicas --dev runs without --replicas', () => {
  it('is 3, or one per region where the profile has more', () => {
    expect(defaultReplicas()).toBe(3);
    expect(defaultReplicas(PROFILES.lan)).toBe(3);
    expect(defaultReplicas(PROFILES['us-eu'])).toBe(3);
    expect(defaultReplicas(PROFILES.global)).toBe(5);
  });
});
