import type { SimFrame } from '@creek/server/sim';
import type { LiveReplica } from './live-model.js';

const SVG = 'http://www.w3.org/2000/svg';

function el(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

export type LinkState = 'up' | 'blocked' | 'down';

/** A message drawn on its way: `progress` 0 as it leaves `from`, 1 as it reaches `to`. */
export interface GraphMessage {
  readonly from: number;
  readonly to: number;
  /** Its layer and kind: `gossip push`, `paxos accept`, … (the layer colours it). */
  readonly kind: string;
  readonly progress: number;
}

/** What the graph draws, from a live cluster's streams or a simulated frame alike. */
export interface GraphModel {
  readonly nodes: readonly {
    readonly id: number;
    readonly role: 'leader' | 'follower' | 'candidate' | 'down';
    /** The region it sits in, under a network profile (drawn under it). */
    readonly region?: string;
  }[];
  readonly links: readonly {
    readonly a: number;
    readonly b: number;
    readonly state: LinkState;
    /**
     * The round trip (ms) the two ends' added delays put on the link, as they report them (drawn
     * on it when above 0): configured, not measured, and without the link's own latency.
     */
    readonly rttMs?: number;
  }[];
  /** Per sender, per peer: messages sent in the last second (drawn as a label), when known. */
  readonly rates?: ReadonlyMap<number, ReadonlyMap<number, number>>;
  readonly messages: readonly GraphMessage[];
}

/** A link between two replicas, as both ends report it. */
export function linkState(a: LiveReplica, b: LiveReplica): LinkState {
  const ab = a.links.find((l) => l.id === b.id);
  const ba = b.links.find((l) => l.id === a.id);
  if ([ab, ba].some((l) => l !== undefined && (l.blockedIn || l.blockedOut))) return 'blocked';
  if (a.connection !== 'open' || b.connection !== 'open') return 'down';
  if ([ab, ba].some((l) => l !== undefined && l.state !== 'connected')) return 'down';
  return 'up';
}

function pairs<T>(xs: readonly T[]): [T, T][] {
  const out: [T, T][] = [];
  for (let i = 0; i < xs.length; i++)
    for (let j = i + 1; j < xs.length; j++) out.push([xs[i]!, xs[j]!]);
  return out;
}

/**
 * The round trip the delays of both ends add to their link, once both have reported theirs (a
 * replica that predates `delayMs` reports none).
 */
export function addedRttMs(a: LiveReplica, b: LiveReplica): number | undefined {
  const ab = a.links.find((l) => l.id === b.id)?.delayMs;
  const ba = b.links.find((l) => l.id === a.id)?.delayMs;
  return ab === undefined || ba === undefined ? undefined : ab + ba;
}

/**
 * A live cluster as the graph draws it: links as their ends report them, each replica in its
 * region when `regions` (by replica id) names one.
 */
export function liveGraph(
  replicas: readonly LiveReplica[],
  rates: ReadonlyMap<number, ReadonlyMap<number, number>>,
  messages: readonly GraphMessage[],
  regions: ReadonlyMap<number, string> = new Map(),
): GraphModel {
  const links = pairs(replicas).map(([a, b]) => {
    const rttMs = addedRttMs(a, b);
    return { a: a.id, b: b.id, state: linkState(a, b), ...(rttMs === undefined ? {} : { rttMs }) };
  });
  const key = (x: number, y: number): string => (x < y ? `${x}-${y}` : `${y}-${x}`);
  const state = new Map(links.map((l) => [key(l.a, l.b), l.state]));
  return {
    nodes: replicas.map((r) => {
      const region = regions.get(r.id);
      return {
        id: r.id,
        role: r.connection !== 'open' || r.halted !== null ? 'down' : r.role,
        ...(region === undefined ? {} : { region }),
      };
    }),
    links,
    rates,
    // A message on a blocked or broken link is dropped: it does not travel.
    messages: messages.filter((m) => state.get(key(m.from, m.to)) === 'up'),
  };
}

/**
 * A simulated frame as the graph draws it: a link is blocked between two groups of a partition,
 * down where one end is, and every message on its way where it is at the frame's moment.
 */
export function simGraph(f: SimFrame): GraphModel {
  const group = (id: number): number => f.partition?.findIndex((g) => g.includes(id)) ?? 0;
  const up = new Map(f.replicas.map((r) => [r.id, r.up]));
  return {
    nodes: f.replicas.map((r) => ({ id: r.id, role: r.up ? r.role : 'down' })),
    links: pairs(f.replicas).map(([a, b]) => ({
      a: a.id,
      b: b.id,
      state: group(a.id) !== group(b.id) ? 'blocked' : a.up && b.up ? 'up' : 'down',
    })),
    messages: f.messages
      .filter((m) => up.get(m.from) !== undefined && up.get(m.to) !== undefined)
      .map((m) => ({
        from: m.from,
        to: m.to,
        kind: m.kind,
        progress:
          m.arriveAt <= m.sentAt
            ? 1
            : Math.min(1, Math.max(0, (f.at - m.sentAt) / (m.arriveAt - m.sentAt))),
      })),
  };
}

/**
 * The cluster as a graph: replicas on a ring, the leader ringed, each link drawn as its state
 * (up, blocked, down), the messages on their way as dots between their ends (gossip and Paxos
 * coloured apart, each direction on its own side of the link), and where known the messages each
 * replica sent each peer in the last second; under a network profile, each replica's region and
 * the round trip added to each link.
 */
export function clusterGraph(model: GraphModel): SVGElement {
  const size = 300;
  const c = size / 2;
  const n = model.nodes.length;
  const radius = n === 1 ? 0 : 105;
  const index = new Map(model.nodes.map((node, k) => [node.id, k]));
  const at = (id: number): [number, number] => {
    const angle = -Math.PI / 2 + (2 * Math.PI * (index.get(id) ?? 0)) / n;
    return [c + radius * Math.cos(angle), c + radius * Math.sin(angle)];
  };
  const svg = el('svg', {
    id: 'graph',
    viewBox: `0 0 ${size} ${size}`,
    width: size,
    height: size,
    role: 'img',
    'aria-label': 'The replicas, their links and the messages on their way',
  });
  for (const link of model.links) {
    const [x1, y1] = at(link.a);
    const [x2, y2] = at(link.b);
    svg.append(
      el('line', {
        x1,
        y1,
        x2,
        y2,
        class: `link ${link.state}`,
        'data-from': link.a,
        'data-to': link.b,
        'data-state': link.state,
      }),
    );
    if (link.rttMs !== undefined && link.rttMs > 0) {
      const label = el(
        'text',
        {
          x: (x1 + x2) / 2,
          y: (y1 + y2) / 2 + 12,
          class: 'rtt',
          'text-anchor': 'middle',
          'data-from': link.a,
          'data-to': link.b,
          'data-rtt-ms': link.rttMs,
        },
        `${formatMs(link.rttMs)} ms`,
      );
      label.append(
        el(
          'title',
          {},
          `Round trip the delays of replicas ${link.a} and ${link.b} add to their link: configured, not measured`,
        ),
      );
      svg.append(label);
    }
    if (model.rates === undefined) continue;
    // Messages a sent b in the last second near b's end, and b's to a near a's end.
    for (const [from, to, fx, fy, tx, ty] of [
      [link.a, link.b, x1, y1, x2, y2],
      [link.b, link.a, x2, y2, x1, y1],
    ] as const) {
      const rate = model.rates.get(from)?.get(to) ?? 0;
      svg.append(
        el(
          'text',
          {
            x: fx + (tx - fx) * 0.7,
            y: fy + (ty - fy) * 0.7 - 4,
            class: 'rate',
            'text-anchor': 'middle',
          },
          rate > 0 ? `${rate}/s` : '',
        ),
      );
    }
  }
  for (const m of model.messages) {
    if (!index.has(m.from) || !index.has(m.to)) continue;
    const [fx, fy] = at(m.from);
    const [tx, ty] = at(m.to);
    // Each direction a few pixels to its own side (to the right of travel), so both can be seen.
    const len = Math.hypot(tx - fx, ty - fy) || 1;
    const [ox, oy] = [(-(ty - fy) / len) * 4, ((tx - fx) / len) * 4];
    const dot = el('circle', {
      cx: fx + (tx - fx) * m.progress + ox,
      cy: fy + (ty - fy) * m.progress + oy,
      r: 3,
      class: `message ${m.kind.split(' ')[0] ?? ''}`,
      'data-kind': m.kind,
      'data-from': m.from,
      'data-to': m.to,
    });
    dot.append(el('title', {}, `${m.kind}: replica ${m.from} → ${m.to}`));
    svg.append(dot);
  }
  for (const node of model.nodes) {
    const [x, y] = at(node.id);
    svg.append(
      el('circle', { cx: x, cy: y, r: 24, class: `node ${node.role}`, 'data-replica': node.id }),
    );
    svg.append(el('text', { x, y: y + 5, 'text-anchor': 'middle', class: 'label' }, `R${node.id}`));
    if (node.region !== undefined)
      svg.append(
        el(
          'text',
          {
            x,
            y: y + 37,
            'text-anchor': 'middle',
            class: 'region',
            'data-replica': node.id,
            'data-region': node.region,
          },
          node.region,
        ),
      );
  }
  return svg;
}

/** A round trip as a label shows it: whole milliseconds, or one decimal under 10. */
function formatMs(ms: number): string {
  return ms < 10 ? ms.toFixed(1).replace(/\.0$/, '') : String(Math.round(ms));
}
