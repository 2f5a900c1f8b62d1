import { z } from 'zod';
import {
  MIN_HEARTBEATS_PER_ELECTION_TIMEOUT,
  NETWORK_KINDS,
  TIMERS,
  type NetworkKind,
  type PaxosTimers,
} from '../geo/index.js';
import { DEFAULT_TICK_MS } from './replica-server-config.js';
import type { OptionSpecs } from './settings.js';

/*
 * The replica's Paxos timers as `creek start` settings: a profile of defaults for the kind of
 * network the replicas are on (`--network lan|wan`, geo/timers.ts says why each value), and the
 * heartbeat and election timeout overriding it. The retransmit interval stays the profile's: the
 * peer mesh measures no round trip to derive it from (its links are TCP, so it only covers
 * messages lost to a reconnection), and the profile's value sits above the longest round trip the
 * profile is for.
 */

/** Timers are looked at once per tick, so a shorter heartbeat would not be sent more often. */
export const MIN_HEARTBEAT_MS = DEFAULT_TICK_MS;
export const MAX_HEARTBEAT_MS = 10_000;
/** Below 100 ms a loaded machine's pauses (GC, a busy core) already depose leaders. */
export const MIN_ELECTION_TIMEOUT_MS = 100;
export const MAX_ELECTION_TIMEOUT_MS = 120_000;

export const TIMER_OPTIONS = {
  network: {
    type: 'string',
    value: NETWORK_KINDS.join('|'),
    help: `the Paxos timers' and state transfers' defaults: lan (heartbeat ${TIMERS.lan.heartbeatMs} ms, election timeout ${TIMERS.lan.electionTimeoutMs} ms) or wan, for round trips up to 300 ms (${TIMERS.wan.heartbeatMs} ms, ${TIMERS.wan.electionTimeoutMs} ms; default lan)`,
  },
  'heartbeat-ms': {
    type: 'string',
    value: 'MS',
    help: `how often each replica announces itself, ${MIN_HEARTBEAT_MS}-${MAX_HEARTBEAT_MS} ms (default: --network's)`,
  },
  'election-timeout-ms': {
    type: 'string',
    value: 'MS',
    help: `silence after which the leader is presumed down, ${MIN_ELECTION_TIMEOUT_MS}-${MAX_ELECTION_TIMEOUT_MS} ms and at least ${MIN_HEARTBEATS_PER_ELECTION_TIMEOUT} heartbeats (default: --network's)`,
  },
} as const satisfies OptionSpecs;

function ms(min: number, max: number) {
  const message = `must be a whole number of milliseconds from ${min} to ${max}`;
  return z.union([z.number(), z.string()], { error: message }).transform((v, ctx) => {
    const n = typeof v === 'number' ? v : /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
    if (Number.isInteger(n) && n >= min && n <= max) return n;
    ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  });
}

export const timerSettingsShape = {
  network: z
    .enum(NETWORK_KINDS, { error: `must be one of ${NETWORK_KINDS.join(', ')}` })
    .default('lan'),
  'heartbeat-ms': ms(MIN_HEARTBEAT_MS, MAX_HEARTBEAT_MS).optional(),
  'election-timeout-ms': ms(MIN_ELECTION_TIMEOUT_MS, MAX_ELECTION_TIMEOUT_MS).optional(),
};

interface TimerSettings {
  readonly network: NetworkKind;
  readonly 'heartbeat-ms'?: number | undefined;
  readonly 'election-timeout-ms'?: number | undefined;
}

/** The timers the settings make: the profile's, with the overrides given. */
export function timersOf(s: TimerSettings): PaxosTimers {
  const profile = TIMERS[s.network];
  return {
    heartbeatMs: s['heartbeat-ms'] ?? profile.heartbeatMs,
    electionTimeoutMs: s['election-timeout-ms'] ?? profile.electionTimeoutMs,
    retransmitMs: profile.retransmitMs,
  };
}

/**
 * An election timeout shorter than a few heartbeats deposes a live leader whenever one heartbeat
 * is late or lost; the message names the heartbeat it was measured against.
 */
export function checkTimerSettings(s: TimerSettings, ctx: z.RefinementCtx): void {
  const { heartbeatMs, electionTimeoutMs } = timersOf(s);
  const least = MIN_HEARTBEATS_PER_ELECTION_TIMEOUT * heartbeatMs;
  if (electionTimeoutMs >= least) return;
  const heartbeat =
    s['heartbeat-ms'] === undefined
      ? `--network ${s.network}'s heartbeat, ${heartbeatMs} ms`
      : `--heartbeat-ms ${heartbeatMs}`;
  const path = s['election-timeout-ms'] === undefined ? 'heartbeat-ms' : 'election-timeout-ms';
  ctx.addIssue({
    code: 'custom',
    path: [path],
    message: `leaves an election timeout of ${electionTimeoutMs} ms, under ${MIN_HEARTBEATS_PER_ELECTION_TIMEOUT} heartbeats (${MIN_HEARTBEATS_PER_ELECTION_TIMEOUT} × ${heartbeat} = ${least} ms): followers would depose a live leader whenever one heartbeat is late; raise --election-timeout-ms or lower --heartbeat-ms`,
  });
}
