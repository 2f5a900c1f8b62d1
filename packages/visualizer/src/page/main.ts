import { FAULT_MODES, PLANTED_BUGS, type FaultMode } from '@creek/server/sim';
import { LiveCharts } from './charts.js';
import { clusterGraph, simGraph } from './graph.js';
import { startLive, type LiveConfig } from './live.js';
import {
  committedOrder,
  h,
  networkLine,
  opTimelines,
  replicaCard,
  shownOrder,
  verdict,
} from './render.js';
import { jumpedAhead } from './reorders.js';
import { opIdsIn, replay, simTimelines, type Replay, type RunRequest } from './replay.js';
import { queryOf, runFromQuery, simFlagsOf } from './url-state.js';

/**
 * The visualizer's simulation mode: choose replicas, seed and fault mode (or open a URL that names
 * them), run the simulator here in the page, then play, pause, step and scrub through the run.
 * The body's `data-state` says where the page is (idle, running, done, invalid), so tests wait on
 * it rather than on time.
 */
const FAULT_LABELS: Record<FaultMode, string> = {
  none: 'No faults',
  partition: 'Partitions',
  crash: 'Crashes',
  all: 'Every fault',
  reconfig: 'Every fault, and replicas added and removed',
  lag: 'A replica that falls far behind',
  'lag-cut': 'Falls behind, then cut off again',
};

/** Frames over which a reorder stays marked: 100 simulated ms, 400 ms of playing. */
const MOVED_FRAMES = 10;

/** Per replica, the ops of frame `k` that were reordered in the MOVED_FRAMES frames up to it. */
function movedAt(r: Replay, k: number): Set<string>[] {
  const f = r.frames[k]!;
  return f.replicas.map((rep, i) => {
    const shown = new Set(shownOrder(rep));
    const moved = new Set<string>();
    for (let j = Math.max(1, k - MOVED_FRAMES + 1); j <= k; j++) {
      // A replica added during the run is in the frames from its start on.
      const before = r.frames[j - 1]!.replicas[i];
      const after = r.frames[j]!.replicas[i];
      if (before === undefined || after === undefined) continue;
      for (const id of jumpedAhead(shownOrder(before), shownOrder(after)))
        if (shown.has(id)) moved.add(id);
    }
    return moved;
  });
}

/** Real ms per frame while playing: a frame is 10 simulated ms, so a run plays at a quarter speed. */
const PLAY_MS = 40;

const app = document.getElementById('app')!;
let current: Replay | null = null;
let charts: LiveCharts | null = null;
let position = 0;
let playing: ReturnType<typeof setInterval> | null = null;

function form(request: RunRequest | null): HTMLFormElement {
  const replicas = h(
    'select',
    { name: 'replicas', 'aria-label': 'Replicas' },
    ...[1, 2, 3, 4, 5, 6, 7].map((n) =>
      h('option', { value: n, selected: (request?.replicas ?? 3) === n }, String(n)),
    ),
  );
  const seed = h('input', {
    name: 'seed',
    type: 'number',
    min: 0,
    step: 1,
    required: true,
    value: request?.seed ?? 1,
    'aria-label': 'Seed',
  });
  const faults = h(
    'select',
    { name: 'faults', 'aria-label': 'Faults' },
    ...FAULT_MODES.map((m) =>
      h('option', { value: m, selected: (request?.faults ?? 'all') === m }, FAULT_LABELS[m]),
    ),
  );
  const f = h(
    'form',
    { id: 'run' },
    h('label', {}, 'Replicas ', replicas),
    h('label', {}, 'Seed ', seed),
    h('label', {}, 'Faults ', faults),
    h('button', { type: 'submit' }, 'Run'),
  ) as HTMLFormElement;
  f.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const data = new FormData(f);
    const next = `?seed=${String(data.get('seed'))}&replicas=${String(data.get('replicas'))}&faults=${String(data.get('faults'))}`;
    history.pushState(null, '', next);
    start();
  });
  return f;
}

function setState(state: 'idle' | 'running' | 'done' | 'invalid'): void {
  document.body.dataset.state = state;
}

function stop(): void {
  if (playing !== null) clearInterval(playing);
  playing = null;
  const b = document.querySelector<HTMLButtonElement>('[data-act=play]');
  if (b !== null) b.textContent = 'Play';
}

function show(k: number): void {
  if (current === null) return;
  position = Math.max(0, Math.min(current.frames.length - 1, k));
  const f = current.frames[position]!;
  const flagged = opIdsIn(current.result.violations);
  const moved = movedAt(current, position);
  document.getElementById('clock')!.textContent =
    `${Math.round(f.at)} ms of ${Math.round(current.result.stats.simulatedMs)} · ${f.invoked} ops invoked`;
  (document.getElementById('scrub') as HTMLInputElement).value = String(position);
  const net = document.getElementById('network')!;
  net.textContent = networkLine(f);
  net.dataset.partitioned = String(f.partition !== null);
  document
    .getElementById('replicas')!
    .replaceChildren(...f.replicas.map((r, i) => replicaCard(r, flagged, moved[i])));
  const graph = clusterGraph(simGraph(f));
  graph.dataset.inFlight = String(f.messagesInFlight);
  document.getElementById('graph-slot')!.replaceChildren(graph);
  document.getElementById('timeline-slot')!.replaceChildren(opTimelines(simTimelines(f), flagged));
  charts?.replace(current.samples.filter((s) => s.frame <= position).map((s) => s.sample));
  document.body.dataset.frame = String(position);
}

function timeline(r: Replay): HTMLElement {
  const scrub = h('input', {
    id: 'scrub',
    type: 'range',
    min: 0,
    max: r.frames.length - 1,
    value: 0,
    'aria-label': 'Simulated time',
  }) as HTMLInputElement;
  scrub.addEventListener('input', () => {
    stop();
    show(Number(scrub.value));
  });
  const button = (act: string, label: string, title: string, fn: () => void): HTMLElement => {
    const b = h('button', { type: 'button', 'data-act': act, title }, label);
    b.addEventListener('click', fn);
    return b;
  };
  return h(
    'section',
    { id: 'timeline' },
    button('start', '«', 'To the start', () => (stop(), show(0))),
    button('back', '◀', 'One step back', () => (stop(), show(position - 1))),
    button('play', 'Play', 'Play or pause', () => {
      if (playing !== null) return stop();
      if (position >= r.frames.length - 1) show(0);
      document.querySelector('[data-act=play]')!.textContent = 'Pause';
      playing = setInterval(() => {
        if (position >= r.frames.length - 1) return stop();
        show(position + 1);
      }, PLAY_MS);
    }),
    button('forward', '▶', 'One step forward', () => (stop(), show(position + 1))),
    button('end', '»', 'To the end', () => (stop(), show(r.frames.length - 1))),
    scrub,
    h('output', { id: 'clock' }),
  );
}

function start(): void {
  stop();
  const parsed = runFromQuery(location.search);
  const request = parsed.ok ? parsed.request : null;
  const header = h(
    'header',
    {},
    h('h1', {}, 'Creek visualizer'),
    h('span', { class: 'mode' }, 'Simulation'),
  );
  app.replaceChildren(header, form(request));
  if (!parsed.ok) {
    if (parsed.problem !== null) app.append(h('p', { class: 'problem' }, parsed.problem));
    else
      app.append(
        h(
          'p',
          { class: 'intro' },
          'Pick a seed and run it: the simulator runs here, in the page, exactly as `npm run sim` runs it, and you can step through what every replica did.',
        ),
      );
    setState(parsed.problem === null ? 'idle' : 'invalid');
    return;
  }
  setState('running');
  app.append(h('p', { class: 'running' }, `Running seed ${parsed.request.seed}…`));
  // Let the page paint "Running" before the run takes the thread.
  setTimeout(() => {
    current = replay(parsed.request);
    document.title = `Creek visualizer: seed ${parsed.request.seed}`;
    const flagged = opIdsIn(current.result.violations);
    // Every replica of the run, those added by a membership change included.
    charts = new LiveCharts(
      current.frames.at(-1)?.replicas.map((r) => r.id) ??
        Array.from({ length: parsed.request.replicas }, (_, k) => k),
      { simulated: true },
    );
    const bug = parsed.request.bug;
    app.replaceChildren(
      header,
      form(request),
      ...(bug === null
        ? []
        : [
            h(
              'p',
              { class: 'problem', id: 'planted' },
              `A bug planted on purpose (${bug}): ${PLANTED_BUGS[bug].what}. The checkers should catch it.`,
            ),
          ]),
      verdict(current),
      timeline(current),
      h('p', { id: 'network' }),
      h(
        'p',
        { class: 'legend' },
        h('span', { class: 'op weak' }, 'weak'),
        ' ',
        h('span', { class: 'op strong' }, 'strong'),
        ' committed ops are solid, tentative ones (in each replica’s speculative order) dashed; ',
        h('span', { class: 'op weak moved' }, 'ringed'),
        ' ops were just reordered: they moved ahead of ops they followed',
        current.result.ok ? '' : '; ops a failed check names are red',
      ),
      h(
        'div',
        { class: 'overview' },
        h('div', { id: 'graph-slot' }),
        h('section', { id: 'replicas' }),
      ),
      h(
        'p',
        { class: 'legend' },
        'In the graph, each dot is a message on its way: ',
        h('span', { class: 'dot gossip' }, 'gossip'),
        ' (ops and summaries) or ',
        h('span', { class: 'dot paxos' }, 'Paxos'),
        ' (the order of strong ops); a link is green when up, red and dashed when a partition blocks it, grey and dotted when a replica is down.',
      ),
      h('div', { id: 'timeline-slot' }),
      charts.element,
      committedOrder(current, flagged),
      h(
        'p',
        { class: 'replay' },
        `Replay in a terminal: npm run sim -- ${simFlagsOf(parsed.request)} --verbose (this page: ${queryOf(parsed.request)})`,
      ),
    );
    show(current.frames.length - 1);
    setState('done');
  }, 0);
}

/** The cluster the server was started for (`--urls`), handed over in the page, or null. */
function liveConfig(): LiveConfig | null {
  const el = document.getElementById('live-config');
  return el === null ? null : (JSON.parse(el.textContent ?? 'null') as LiveConfig | null);
}

const live = liveConfig();
if (live !== null && !new URLSearchParams(location.search).has('seed')) startLive(app, live);
else {
  window.addEventListener('popstate', start);
  start();
}
