import type { HostInput, Ready } from './ready.js';
import type { ReplicaHost } from './replica-host.js';

/**
 * One step of a host whose driver makes records durable at once, or keeps none (the in-memory
 * cluster, test harnesses, the CAB benchmark): the step's Ready with its records taken as durable
 * in the same call, so that what the host held for them is released in it too.
 */
export function stepWithInstantDisk(host: ReplicaHost, input: HostInput): Ready {
  const ready = host.step(input);
  if (ready.records.length === 0) return ready;
  const released = host.step({
    kind: 'durable',
    upTo: ready.firstSeq + ready.records.length - 1,
  });
  if (released.outputs.length === 0 && released.events.length === 0 && released.halted === null)
    return { ...ready, waits: [] };
  return {
    records: ready.records,
    firstSeq: ready.firstSeq,
    outputs: [...ready.outputs, ...released.outputs],
    events: [...ready.events, ...released.events],
    waits: [],
    halted: ready.halted ?? released.halted,
  };
}
