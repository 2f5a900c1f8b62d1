import { pino } from 'pino';
import { expect, it } from 'vitest';
import {
  DEFAULT_EDGE_LIMITS,
  EDGE_LIMITS_ENV,
  edgeLimitsFromEnv,
} from '../../src/node/edge-limits.js';
import { newViolations, ViolationLog, type EdgeEndpoint } from '../../src/node/edge-violations.js';

it('a flood of one kind of violation is counted in full and logged once per interval', () => {
  const lines: string[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
  const violations = new ViolationLog(log, 60_000);
  const client: EdgeEndpoint = { name: 'client', violations: newViolations() };
  const peer: EdgeEndpoint = { name: 'peer', violations: newViolations() };
  for (let i = 0; i < 1_000; i++) violations.record(client, 'helloDeadline', {}, 'closed');
  violations.record(client, 'auth', {}, 'closed');
  violations.record(peer, 'helloDeadline', {}, 'closed');
  expect(client.violations.helloDeadline).toBe(1_000);
  expect(client.violations.auth).toBe(1);
  expect(peer.violations.helloDeadline).toBe(1);
  // One line per endpoint and kind.
  expect(lines).toHaveLength(3);
});

it(`${EDGE_LIMITS_ENV} overrides named limits and refuses anything else, naming it`, () => {
  expect(edgeLimitsFromEnv({})).toEqual({});
  expect(edgeLimitsFromEnv({ [EDGE_LIMITS_ENV]: '{"helloDeadlineMs":1000}' })).toEqual({
    helloDeadlineMs: 1000,
  });
  expect(() => edgeLimitsFromEnv({ [EDGE_LIMITS_ENV]: 'helloDeadlineMs=1000' })).toThrow(
    /CREEK_EDGE_LIMITS must be a JSON object/,
  );
  expect(() => edgeLimitsFromEnv({ [EDGE_LIMITS_ENV]: '{"helloDeadlineMs":-1}' })).toThrow(
    /CREEK_EDGE_LIMITS helloDeadlineMs/,
  );
  // The event stream's viewer limits, too: a viewer with no budget would never be sent anything.
  expect(() => edgeLimitsFromEnv({ [EDGE_LIMITS_ENV]: '{"viewerEventsPerSecond":0}' })).toThrow(
    /CREEK_EDGE_LIMITS viewerEventsPerSecond/,
  );
  expect(() => edgeLimitsFromEnv({ [EDGE_LIMITS_ENV]: '{"viewerBufferBytes":"1MiB"}' })).toThrow(
    /CREEK_EDGE_LIMITS viewerBufferBytes/,
  );
  expect(() => edgeLimitsFromEnv({ [EDGE_LIMITS_ENV]: '{"helloDeadline":5}' })).toThrow(
    /helloDeadline/,
  );
  expect(Object.values(DEFAULT_EDGE_LIMITS).every((n) => Number.isInteger(n) && n > 0)).toBe(true);
});
