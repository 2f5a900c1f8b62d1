import type { LiveReplica } from './live-model.js';

const SVG = 'http://www.w3.org/2000/svg';

function el(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** A link between two replicas, as both ends report it. */
export function linkState(a: LiveReplica, b: LiveReplica): 'up' | 'blocked' | 'down' {
  const ab = a.links.find((l) => l.id === b.id);
  const ba = b.links.find((l) => l.id === a.id);
  if ([ab, ba].some((l) => l !== undefined && (l.blockedIn || l.blockedOut))) return 'blocked';
  if (a.connection !== 'open' || b.connection !== 'open') return 'down';
  if ([ab, ba].some((l) => l !== undefined && l.state !== 'connected')) return 'down';
  return 'up';
}

/**
 * The cluster as a graph: replicas on a ring, the leader ringed, each link drawn as its ends
 * report it (up, blocked by an operator, down), and on each direction the gossip messages sent in
 * the last second (`rates`: per replica, per peer).
 */
export function clusterGraph(
  replicas: readonly LiveReplica[],
  rates: ReadonlyMap<number, ReadonlyMap<number, number>>,
): SVGElement {
  const size = 300;
  const c = size / 2;
  const radius = replicas.length === 1 ? 0 : 105;
  const at = (k: number): [number, number] => {
    const angle = -Math.PI / 2 + (2 * Math.PI * k) / replicas.length;
    return [c + radius * Math.cos(angle), c + radius * Math.sin(angle)];
  };
  const svg = el('svg', {
    id: 'graph',
    viewBox: `0 0 ${size} ${size}`,
    width: size,
    height: size,
    role: 'img',
    'aria-label': 'The replicas and their links',
  });
  for (let i = 0; i < replicas.length; i++)
    for (let j = i + 1; j < replicas.length; j++) {
      const [a, b] = [replicas[i]!, replicas[j]!];
      const [x1, y1] = at(i);
      const [x2, y2] = at(j);
      const state = linkState(a, b);
      svg.append(
        el('line', {
          x1,
          y1,
          x2,
          y2,
          class: `link ${state}`,
          'data-from': a.id,
          'data-to': b.id,
          'data-state': state,
        }),
      );
      // Messages a sent b in the last second near b's end, and b's to a near a's end.
      for (const [from, to, fx, fy, tx, ty] of [
        [a, b, x1, y1, x2, y2],
        [b, a, x2, y2, x1, y1],
      ] as const) {
        const n = rates.get(from.id)?.get(to.id) ?? 0;
        svg.append(
          el(
            'text',
            {
              x: fx + (tx - fx) * 0.7,
              y: fy + (ty - fy) * 0.7 - 4,
              class: 'rate',
              'text-anchor': 'middle',
            },
            n > 0 ? `${n}/s` : '',
          ),
        );
      }
    }
  replicas.forEach((r, k) => {
    const [x, y] = at(k);
    const role = r.connection !== 'open' || r.halted !== null ? 'down' : r.role;
    svg.append(el('circle', { cx: x, cy: y, r: 24, class: `node ${role}`, 'data-replica': r.id }));
    svg.append(el('text', { x, y: y + 5, 'text-anchor': 'middle', class: 'label' }, `R${r.id}`));
  });
  return svg;
}
