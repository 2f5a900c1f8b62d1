import { EVENTS_VERSION, EventsFrameSchema } from '@creek/protocol';
import { LiveCharts } from './charts.js';
import { clusterGraph, liveGraph } from './graph.js';
import { Flights } from './live-flights.js';
import { Sampler } from './samples.js';
import {
  apply,
  asFrame,
  converged,
  liveStateOf,
  newLiveReplica,
  type LiveProfile,
  type LiveReplica,
} from './live-model.js';
import { h, opTimelines, replicaCard, shownOrder } from './render.js';
import { RecentReorders } from './reorders.js';
import { devUsers, signInAs } from './dev-sign-in.js';
import { Workload } from './workload.js';
import { appOps, parseTemplate, type WorkloadOps } from './workload-ops.js';

/** What the server hands the page for live mode (never in the URL). */
export interface LiveConfig {
  readonly replicas: readonly {
    readonly id: number;
    readonly client: string;
    readonly events: string;
  }[];
  readonly token: string | null;
  readonly adminToken: string;
  /** The server runs the replicas: the page may kill and restart them. */
  readonly supervised?: boolean;
  /**
   * The replicas verify users' tokens from the server's dev identity provider: the workload signs
   * in as a dev user, chosen in the panel, through the server's /dev/sign-in.
   */
  readonly signIn?: boolean;
  /** The network profile whose delays the server's replicas carry on their links. */
  readonly profile?: LiveProfile;
}

/** The dev user the workload signs in as until another is picked. */
const FIRST_DEV_USER = 'alice';

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * A card's line of tentative answers that held, per op (the replica's status, its ops with the most
 * tentative answers first): which ops' speculation pays off here and which are often corrected.
 */
function accuracyLine(r: LiveReplica): HTMLElement {
  const ops = Object.entries(r.byOp).sort(([, a], [, b]) => b.speculated - a.speculated);
  const speculated = ops.reduce((n, [, c]) => n + c.speculated, 0);
  return h(
    'p',
    { class: 'facts', 'data-role': 'accuracy', 'data-speculated': speculated },
    ops.length === 0
      ? 'Tentative answers that held: none final yet'
      : `Tentative answers that held: ${ops
          .map(([op, c]) => `${op} ${c.speculatedCorrectly} of ${c.speculated}`)
          .join(' · ')}`,
  );
}

/** The delay "Slow links" adds to each of a replica's links (ms): a wide-area round trip. */
const SLOW_LINK_MS = 200;

/** Redraws at most this often (ms): the streams may bring hundreds of events a second. */
const DRAW_MS = 100;

/**
 * Live mode: every replica's /events stream drawn as cards (the same as simulation mode's), the
 * network as the links report it, whether the replicas converged, controls that act through the
 * visualizer server's /api/admin (cut a replica off, heal, pause, resume), and a workload panel.
 */
export function startLive(app: HTMLElement, config: LiveConfig): void {
  const replicas = config.replicas.map((r) => newLiveReplica(r.id));
  /** Whom the workload's clients sign in as (null: anonymous, no dev identity). */
  let user: string | null = config.signIn === true ? FIRST_DEV_USER : null;
  const newWorkload = (): Workload => {
    const as = user;
    return new Workload(
      config.replicas.map((r) => r.client),
      config.token,
      as === null ? null : () => signInAs(as),
    );
  };
  let workload = newWorkload();
  let dirty = true;
  const flights = new Flights();
  const reorders = new RecentReorders();
  const ids = config.replicas.map((r) => r.id);
  const profile = config.profile;
  const regions = new Map((profile?.regions ?? []).map((region, id) => [id, region]));
  /** The delay a healed link carries: the profile's, or none. */
  const baseDelay = (from: number, to: number): number =>
    profile?.delays.find((d) => d.from === from && d.to === to)?.ms ?? 0;

  for (const [k, r] of config.replicas.entries()) watch(r.events, replicas[k]!);

  function watch(url: string, model: LiveReplica): void {
    const ws = new WebSocket(url);
    model.connection = 'connecting';
    ws.onopen = () =>
      ws.send(JSON.stringify({ t: 'watch', version: EVENTS_VERSION, token: config.adminToken }));
    ws.onmessage = (ev: MessageEvent) => {
      const parsed = EventsFrameSchema.safeParse(JSON.parse(String(ev.data)));
      if (!parsed.success) return;
      const f = parsed.data;
      if (f.t === 'hello') model.connection = 'open';
      else if (f.t === 'error') model.problem = f.message;
      else
        for (const e of f.events) {
          apply(model, e);
          flights.add(
            model.id,
            e,
            ids.filter((x) => x !== model.id),
            performance.now(),
          );
        }
      dirty = true;
    };
    ws.onclose = () => {
      model.connection = 'closed';
      dirty = true;
      // A replica that restarts comes back: try again.
      setTimeout(() => watch(url, model), 1_000);
    };
  }

  async function admin(replica: number, action: string, params: Record<string, number> = {}) {
    const q = new URLSearchParams({ replica: String(replica), action });
    for (const [k, v] of Object.entries(params)) q.set(k, String(v));
    const r = await fetch(`/api/admin?${q.toString()}`, { method: 'POST' });
    if (!r.ok) {
      const body = (await r.json().catch(() => ({}))) as { error?: string };
      message.textContent = `${action} on replica ${replica} failed: ${body.error ?? r.status}`;
    }
  }

  const message = h('p', { class: 'problem', id: 'message' });
  const rate = h('input', { name: 'rate', type: 'number', min: 1, max: 2000, value: 60 });
  const strong = h('input', { name: 'strong', type: 'number', min: 0, max: 100, value: 20 });
  const keys = h('input', { name: 'keys', type: 'number', min: 1, max: 100000, value: 10 });
  const opSelect = h(
    'select',
    { name: 'op', 'aria-label': 'Ops' },
    h('option', { value: '' }, 'Built-in counter (kv.put, kv.increment)'),
  ) as HTMLSelectElement;
  const argsInput = h('input', {
    name: 'args',
    type: 'text',
    value: '{"key": "$key"}',
    size: 36,
    disabled: true,
    'aria-label': 'Arguments',
    title: 'JSON; "$key" in a string becomes one of the keys (k0, k1, …), "$n" the op’s number',
  }) as HTMLInputElement;
  opSelect.addEventListener('change', () => (argsInput.disabled = opSelect.value === ''));
  /** Fills the op list once a replica has said which ops its app offers. */
  const listOps = setInterval(() => {
    const offered = workload.operations();
    if (offered === null) return;
    clearInterval(listOps);
    for (const op of appOps(offered)) opSelect.append(h('option', { value: op }, op));
    opSelect.dataset.loaded = 'true';
  }, 250);
  const toggle = h('button', { type: 'submit', 'data-act': 'workload' }, 'Start workload');
  /** The "sign in as" picker: a new user means new clients, signed in as that user. */
  const userSelect = h(
    'select',
    { name: 'user', 'aria-label': 'Sign in as' },
    h('option', { value: FIRST_DEV_USER }, FIRST_DEV_USER),
  ) as HTMLSelectElement;
  if (user !== null)
    devUsers().then(
      (users) => {
        userSelect.replaceChildren(...users.map((u) => h('option', { value: u }, u)));
        userSelect.value = user ?? FIRST_DEV_USER;
        userSelect.dataset.loaded = 'true';
      },
      (err: unknown) => (message.textContent = `Sign-in: ${(err as Error).message}`),
    );
  userSelect.addEventListener('change', () => {
    workload.close();
    user = userSelect.value;
    workload = newWorkload();
    toggle.textContent = 'Start workload';
    document.body.dataset.workload = 'stopped';
  });
  const panel = h(
    'form',
    { id: 'workload' },
    h('label', {}, 'Ops per second ', rate),
    h('label', {}, 'Strong % ', strong),
    h('label', {}, 'Keys ', keys),
    h('label', {}, 'Ops ', opSelect),
    h('label', {}, 'Arguments ', argsInput),
    ...(user === null ? [] : [h('label', {}, 'Sign in as ', userSelect)]),
    toggle,
  ) as HTMLFormElement;
  panel.addEventListener('submit', (ev) => {
    ev.preventDefault();
    message.textContent = '';
    if (workload.running) workload.stop();
    else {
      const value = (el: HTMLElement): number => Number((el as HTMLInputElement).value);
      let ops: WorkloadOps = { kind: 'builtin' };
      if (opSelect.value !== '') {
        const parsed = parseTemplate(argsInput.value.trim());
        if (!parsed.ok) {
          message.textContent = `Workload not started: ${parsed.problem}`;
          return;
        }
        ops = { kind: 'app', op: opSelect.value, template: parsed.template };
      }
      workload.start({ rate: value(rate), strong: value(strong) / 100, keys: value(keys), ops });
    }
    toggle.textContent = workload.running ? 'Stop workload' : 'Start workload';
    document.body.dataset.workload = workload.running ? 'running' : 'stopped';
  });
  const healAll = h('button', { type: 'button', 'data-act': 'heal' }, 'Heal every link');
  healAll.addEventListener('click', () => {
    for (const r of config.replicas) {
      void admin(r.id, 'unblock');
      for (const o of config.replicas)
        if (o.id !== r.id) void admin(r.id, 'delay', { peer: o.id, ms: baseDelay(r.id, o.id) });
    }
  });

  const convergence = h('p', { id: 'convergence' });
  const network = h('p', { id: 'network' });
  const profileLine =
    profile === undefined
      ? ''
      : h(
          'p',
          { id: 'profile', 'data-profile': profile.name },
          `Network profile ${profile.name}: ${profile.description}. Each replica delays its messages to each other one by half the round trip between their regions, always by the same amount (no jitter); Heal restores these delays.`,
        );
  const cards = h('section', { id: 'replicas' });
  const timelines = h('div', { id: 'timeline-slot' });
  const graph = h('div', { id: 'graph-slot' });
  /** Per replica, per peer: gossip messages sent in the last second (the graph's labels). */
  let rates = new Map<number, Map<number, number>>();
  let lastSent = new Map<number, Map<number, number>>();
  const charts = new LiveCharts(config.replicas.map((r) => r.id));
  const sampler = new Sampler();
  app.replaceChildren(
    h('header', {}, h('h1', {}, 'Creek visualizer'), h('span', { class: 'mode' }, 'Live cluster')),
    panel,
    h('p', {}, healAll),
    message,
    profileLine,
    convergence,
    network,
    h('div', { class: 'overview' }, graph, cards),
    h(
      'p',
      { class: 'legend' },
      'In the graph, each dot is a message a replica reports sending: ',
      h('span', { class: 'dot gossip' }, 'gossip'),
      ' (ops, requests for missing ones, summaries of what it holds) or ',
      h('span', { class: 'dot paxos' }, 'Paxos'),
      ' (the leader proposing the order of strong ops); the numbers are gossip messages per second each way',
      profile === undefined
        ? ''
        : ', and "… ms" under a link the round trip its two ends add to it, as they report it (configured, not measured: the link itself adds a little)',
      '. Under load the streams are sampled, and so are the dots.',
    ),
    timelines,
    charts.element,
  );
  document.body.dataset.state = 'live';
  // Once a second: what the replicas and the workload did in it, drawn on the charts.
  setInterval(() => {
    const sent = new Map(replicas.map((r) => [r.id, new Map(r.gossipSent)]));
    rates = new Map(
      replicas.map((r) => [
        r.id,
        new Map(
          [...r.gossipSent].map(([peer, n]) => [peer, n - (lastSent.get(r.id)?.get(peer) ?? n)]),
        ),
      ]),
    );
    lastSent = sent;
    const s = sampler.sample(Date.now() / 1000, replicas, workload.takeAnswers());
    charts.push(s);
    charts.element.dataset.last = JSON.stringify(s);
  }, 1_000);

  /**
   * One card element per replica, kept for the page's life with its buttons: each draw replaces
   * what a card shows, never the card's buttons. A button made anew on each draw (every 100 ms)
   * loses a click whose press and release straddle a draw (so does one moved out and back in: the
   * browser forgets a press on a node that leaves the document), the more often under load. The
   * buttons sit under the card's heading, above everything whose height changes.
   */
  const shownCards = config.replicas.map((r) => {
    const card = h('article', { class: 'replica' });
    card.append(controls(r.id));
    return card;
  });
  cards.replaceChildren(...shownCards);

  /** Draws so far, in `body[data-draws]`: a test reads counts from a draw made after its click. */
  let draws = 0;

  function draw(): void {
    if (!dirty) return;
    dirty = false;
    document.body.dataset.draws = String(++draws);
    timelines.replaceChildren(opTimelines(workload.recent));
    graph.replaceChildren(
      clusterGraph(liveGraph(replicas, rates, flights.current(performance.now()), regions)),
    );
    const ok = converged(replicas);
    convergence.dataset.converged = String(ok);
    convergence.textContent = ok
      ? `Converged: every replica has the same state (digest ${replicas[0]!.digest.slice(0, 12)}…)`
      : `Not converged: ${replicas
          .map((r) => `replica ${r.id} ${r.committed} committed, ${r.tentative} tentative`)
          .join('; ')}`;
    convergence.title = convergence.textContent;
    const cut = replicas.filter((r) => r.links.some((l) => l.blockedIn || l.blockedOut));
    network.dataset.partitioned = String(cut.length > 0);
    network.textContent =
      cut.length === 0
        ? 'Network: no link is blocked'
        : `Network: ${cut
            .map(
              (r) =>
                `replica ${r.id} blocks its links to ${r.links
                  .filter((l) => l.blockedIn || l.blockedOut)
                  .map((l) => l.id)
                  .join(', ')}`,
            )
            .join('; ')}`;
    network.title = network.textContent;
    for (const [k, r] of replicas.entries()) {
      const frame = asFrame(r);
      const drawn = replicaCard(
        frame,
        new Set(),
        reorders.see(r.id, shownOrder(frame)),
        liveStateOf(r),
      );
      const counts = workload.counts[k]!;
      drawn.dataset.connection = r.connection;
      drawn.append(
        h(
          'p',
          { class: 'facts', 'data-role': 'waiting', 'data-waiting': counts.waitingStrong },
          `Workload here: ${counts.invoked} invoked, ${counts.answered} answered, ${counts.waitingStrong} strong waiting`,
        ),
        h(
          'p',
          { class: 'facts' },
          r.connection === 'open' && r.halted !== null
            ? `Halted: ${r.halted}`
            : r.connection === 'open'
              ? `${r.paused ? 'Paused · ' : ''}${r.quorate ? 'hears a majority' : 'hears no majority'} · leader ${r.leader ?? 'unknown'}${r.dropped > 0 ? ` · ${r.dropped} events sampled out` : ''}`
              : r.connection === 'connecting'
                ? 'Connecting…'
                : `Disconnected${r.problem === null ? '' : `: ${r.problem}`}`,
        ),
        h(
          'p',
          { class: 'facts', 'data-role': 'consensus', 'data-decided': r.paxos?.decidedBelow },
          r.paxos === null
            ? 'Consensus: not heard yet'
            : `Consensus: ballot ${r.paxos.ballot} · ${r.paxos.decidedBelow} instances decided · ${plural(r.paxos.elections, 'election')} here · ${plural(r.checkpoints, 'checkpoint')} written`,
        ),
        accuracyLine(r),
      );
      const region = regions.get(r.id);
      if (region !== undefined) {
        drawn.dataset.region = region;
        drawn.querySelector('h2')?.append(h('span', { class: 'region' }, region));
      }
      redrawCard(shownCards[k]!, drawn);
    }
  }

  function controls(id: number): HTMLElement {
    const others = config.replicas.map((r) => r.id).filter((x) => x !== id);
    const button = (act: string, label: string, fn: () => void): HTMLElement => {
      const b = h('button', { type: 'button', 'data-act': act }, label);
      b.addEventListener('click', fn);
      return b;
    };
    return h(
      'div',
      { class: 'controls' },
      button('cut', 'Cut off', () => {
        for (const peer of others) void admin(id, 'block', { peer });
      }),
      button('slow', 'Slow links', () => {
        for (const peer of others) void admin(id, 'delay', { peer, ms: SLOW_LINK_MS });
      }),
      button('heal', 'Heal', () => {
        void admin(id, 'unblock');
        for (const peer of others) void admin(id, 'delay', { peer, ms: baseDelay(id, peer) });
      }),
      button('pause', 'Pause', () => void admin(id, 'pause')),
      button('resume', 'Resume', () => void admin(id, 'resume')),
      ...(config.supervised === true
        ? [
            button('kill', 'Kill', () => void admin(id, 'kill')),
            button('restart', 'Restart', () => void admin(id, 'restart')),
          ]
        : []),
    );
  }

  setInterval(() => {
    dirty = true;
    draw();
  }, DRAW_MS);
  draw();
  window.addEventListener('beforeunload', () => workload.close());
}

/**
 * Makes `card` show what `drawn` shows (its attributes and content), keeping `card`'s buttons in
 * the document throughout, right under the heading: what grows below them (the op lists, the
 * facts) never moves them under a pointer that is pressing one.
 */
function redrawCard(card: HTMLElement, drawn: HTMLElement): void {
  const buttons = card.querySelector(':scope > .controls')!;
  for (const a of [...card.attributes])
    if (!drawn.hasAttribute(a.name)) card.removeAttribute(a.name);
  for (const a of [...drawn.attributes]) card.setAttribute(a.name, a.value);
  for (const n of [...card.childNodes]) if (n !== buttons) n.remove();
  const [heading, ...rest] = [...drawn.childNodes];
  if (heading !== undefined) buttons.before(heading);
  buttons.after(...rest);
}
