import type { FrameOp, SimFrame, SimReplicaFrame } from '@creek/server/sim';
import type { Replay } from './replay.js';
import type { OpTimeline } from './workload.js';

/** Builds an element: `h('p', { class: 'x' }, 'text', child)`. */
export function h(
  tag: string,
  attrs: Record<string, string | number | boolean | undefined> = {},
  ...children: (Node | string)[]
): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) el.append(c);
  return el;
}

/** What a replica is doing, in words a user understands. */
export function stateOf(r: SimReplicaFrame): { label: string; key: string } {
  if (!r.up) return { label: 'Down', key: 'down' };
  if (r.holding) return { label: 'Catching up', key: 'catching-up' };
  if (r.role === 'leader') return { label: 'Leader', key: 'leader' };
  if (r.role === 'candidate') return { label: 'Electing', key: 'candidate' };
  return { label: 'Follower', key: 'follower' };
}

function chip(op: FrameOp, flagged: ReadonlySet<string>, moved: ReadonlySet<string>): HTMLElement {
  const isMoved = moved.has(op.id);
  return h(
    'span',
    {
      class: `op ${op.strong ? 'strong' : 'weak'}${flagged.has(op.id) ? ' flagged' : ''}${isMoved ? ' moved' : ''}`,
      title: `${op.id}: ${op.strong ? 'strong' : 'weak'}${isMoved ? ', moved ahead of ops it followed just now (a reorder)' : ''}${flagged.has(op.id) ? ', named by a failed check' : ''}`,
    },
    op.id,
  );
}

function list(
  kind: 'committed' | 'tentative',
  ops: readonly FrameOp[],
  total: number,
  flagged: ReadonlySet<string>,
  moved: ReadonlySet<string>,
): HTMLElement {
  const more = total - ops.length;
  const shown = more > 0 && ops.length > 0;
  const label =
    kind === 'committed'
      ? `Committed: ${total}${shown ? ` (last ${ops.length} shown)` : ''}`
      : `Tentative: ${total}${shown ? ` (first ${ops.length} shown)` : ''}`;
  return h(
    'div',
    { class: `list ${kind}`, 'data-list': kind, 'data-count': total },
    h('div', { class: 'list-label' }, label),
    h('div', { class: 'ops' }, ...ops.map((o) => chip(o, flagged, moved))),
  );
}

/**
 * One replica at one moment: its state, and the ends of its two lists, ops that were just reordered
 * (`moved`, see reorders.ts) marked.
 */
export function replicaCard(
  r: SimReplicaFrame,
  flagged: ReadonlySet<string>,
  moved: ReadonlySet<string> = new Set(),
  state: { label: string; key: string } = stateOf(r),
): HTMLElement {
  return h(
    'article',
    { class: `replica ${state.key}`, 'data-replica': r.id, 'data-state': state.key },
    h('h2', {}, `Replica ${r.id} `, h('span', { class: 'badge' }, state.label)),
    list('committed', r.committedTail, r.committed, flagged, moved),
    list('tentative', r.tentativeHead, r.tentative, flagged, moved),
  );
}

/** The network at one moment, in words. */
export function networkLine(f: SimFrame): string {
  if (f.partition === null) return 'Network: every replica reaches every other';
  return `Network: partitioned into ${f.partition.map((g) => `{${g.join(', ')}}`).join(' and ')}`;
}

/** The run's verdict: every check held, or which did not. */
export function verdict(r: Replay): HTMLElement {
  const { result } = r;
  const s = result.stats;
  const summary = `${s.ops} ops invoked (${s.strongOps} strong), ${s.committed} committed, ${s.partitions} partitions, ${s.crashes} crashes, ${s.elections} elections over ${Math.round(s.simulatedMs)} ms of simulated time`;
  if (result.ok)
    return h(
      'section',
      { id: 'verdict', 'data-verdict': 'ok' },
      h('h2', {}, 'Every guarantee held'),
      h('p', {}, summary),
    );
  return h(
    'section',
    { id: 'verdict', 'data-verdict': 'failed' },
    h(
      'h2',
      {},
      `${result.violations.length} ${result.violations.length === 1 ? 'check' : 'checks'} failed`,
    ),
    h('p', {}, summary),
    h('ul', { class: 'violations' }, ...result.violations.map((v) => h('li', {}, v))),
  );
}

/** The final committed order, one op per item. */
export function committedOrder(r: Replay, flagged: ReadonlySet<string>): HTMLElement {
  const order = r.result.committedOrder;
  return h(
    'details',
    { id: 'order' },
    h('summary', {}, `Committed order at the end (${order.length} ops)`),
    h(
      'ol',
      { 'data-role': 'committed-order' },
      ...order.map((id) => h('li', flagged.has(id) ? { class: 'flagged' } : {}, id)),
    ),
  );
}

/** A bar from invocation to stable answer, with the tentative answer marked, on a shared scale. */
function bar(t: OpTimeline, scaleMs: number): HTMLElement {
  const at = (ms: number): string => `${Math.min(100, (100 * ms) / scaleMs).toFixed(1)}%`;
  const end = t.stableMs ?? t.tentativeMs;
  const track = h('div', { class: 'track' });
  if (end !== null) track.append(h('span', { class: 'span', style: `width: ${at(end)}` }));
  if (t.tentativeMs !== null)
    track.append(h('span', { class: 'mark tentative', style: `left: ${at(t.tentativeMs)}` }));
  if (t.stableMs !== null)
    track.append(h('span', { class: 'mark stable', style: `left: ${at(t.stableMs)}` }));
  return track;
}

const ms = (x: number | null): string => (x === null ? '…' : `${x.toFixed(1)} ms`);

/** The workload's recent ops, each from invocation to its tentative and stable answers. */
export function opTimelines(
  recent: readonly OpTimeline[],
  flagged: ReadonlySet<string> = new Set(),
): HTMLElement {
  const scale = Math.max(1, ...recent.map((t) => t.stableMs ?? t.tentativeMs ?? 0));
  return h(
    'section',
    { id: 'timelines' },
    h('h2', {}, 'Recent ops: invoked → tentative → stable'),
    h(
      'table',
      {},
      ...[...recent].reverse().map((t) =>
        h(
          'tr',
          {
            'data-level': t.level,
            'data-tentative-ms': t.tentativeMs ?? undefined,
            'data-stable-ms': t.stableMs ?? undefined,
            class:
              [t.failed === null ? '' : 'failed', flagged.has(t.label) ? 'flagged' : '']
                .join(' ')
                .trim() || undefined,
          },
          h('td', {}, t.label),
          h('td', {}, `replica ${t.replica}`),
          h('td', {}, h('span', { class: `op ${t.level}` }, `${t.op} (${t.level})`)),
          h(
            'td',
            { class: 'times' },
            t.failed !== null
              ? `failed: ${t.failed}`
              : t.level === 'weak'
                ? `tentative ${ms(t.tentativeMs)}`
                : `tentative ${ms(t.tentativeMs)} · stable ${ms(t.stableMs)}`,
          ),
          h('td', { class: 'bar' }, bar(t, scale)),
        ),
      ),
    ),
  );
}

/** A replica's order as its card shows it: the last committed ops, then the first tentative ones. */
export function shownOrder(r: SimReplicaFrame): string[] {
  return [...r.committedTail, ...r.tentativeHead].map((o) => o.id);
}
