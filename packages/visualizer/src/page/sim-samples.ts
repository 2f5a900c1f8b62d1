import type { FrameOpLife, SimFrame } from '@creek/server/sim';
import { Sampler, type Sample } from './samples.js';
import type { Answered } from './workload.js';

/** Simulated ms each point of a replay's charts covers. */
export const SAMPLE_MS = 100;

/**
 * A simulated run as the live charts draw a live one: a point every SAMPLE_MS of simulated time,
 * from the frames' counters (committed ops, executions, speculation, rollbacks: per second) and
 * the ops' answers in that window (weak ops' tentative answers, strong ops' stable ones), each
 * point with the index of the frame it was taken at, so the charts can stop where the replay is.
 */
export function simSamples(
  frames: readonly SimFrame[],
  ops: readonly FrameOpLife[],
): { readonly frame: number; readonly sample: Sample }[] {
  const answers: Answered[] = [];
  for (const o of ops) {
    const at = o.strong ? o.stableAt : o.tentativeAt;
    if (at !== null)
      answers.push({ at, ms: at - o.invokedAt, level: o.strong ? 'stable' : 'tentative' });
  }
  answers.sort((a, b) => a.at - b.at);
  const sampler = new Sampler();
  const out: { frame: number; sample: Sample }[] = [];
  let next = 0;
  let from = Number.NEGATIVE_INFINITY;
  frames.forEach((f, k) => {
    if (f.at < from + SAMPLE_MS && !(k === frames.length - 1 && f.at > from)) return;
    const window: Answered[] = [];
    for (; next < answers.length && answers[next]!.at <= f.at; next++) window.push(answers[next]!);
    const s = sampler.sample(Math.round(f.at), f.replicas, window);
    const first = from === Number.NEGATIVE_INFINITY;
    const perSecond = 1000 / (f.at - from);
    from = f.at;
    if (first) return;
    out.push({
      frame: k,
      sample: {
        ...s,
        committed: s.committed.map((c) => (c === null ? null : c * perSecond)),
        rollbacks: s.rollbacks * perSecond,
      },
    });
  });
  return out;
}
