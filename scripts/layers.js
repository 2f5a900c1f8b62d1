// @ts-check
/**
 * The layers of DESIGN.md as import rules: for each folder (a package's sources, or a folder of
 * one), the folders it must never import from. eslint.config.js turns them into
 * `import-x/no-restricted-paths` zones, so an arrow that runs back up fails lint.
 *
 * Packages, from the ground up: app and protocol (the app definition and the wire) import no
 * other package; the replica (@creek/replica: the pure state machines and the host that wires
 * them) imports only those two; the server (the runtime, the simulator, the CLI) stands on the
 * replica, and its simulator also runs the client's pure session (@creek/client/session), so that
 * seeded runs drive real client sessions; the client and React import no replica or server code,
 * except the client's in-memory cluster, which runs the pure replica; examples, the visualizer
 * the benchmarks and the robustness runner sit on top and may use all.
 *
 * Inside the replica: core is the ground; CAB and gossip stand on it and not on each other; the
 * executors run the core's ops; the host wires all four. Inside the server: the simulator and the
 * runtime are the two drivers of the host and never import each other; the determinism checker
 * (`creek check`) stands on the executors' loader and the core, and the CLI drives it.
 */

const REPLICA = 'packages/replica/src';
const SERVER = 'packages/server/src';
const replica = (/** @type {string[]} */ ...dirs) => dirs.map((d) => `${REPLICA}/${d}`);
const server = (/** @type {string[]} */ ...dirs) => dirs.map((d) => `${SERVER}/${d}`);
const TOP = ['packages/examples', 'packages/visualizer', 'bench', 'robustness'];
const ABOVE_PROTOCOL = [
  'packages/replica',
  'packages/server',
  'packages/client',
  'packages/react',
  ...TOP,
];

/** @type {{ target: string, from: string[], except?: string[], why: string }[]} */
const LAYERS = [
  {
    target: 'packages/app/src',
    from: ['packages/protocol', ...ABOVE_PROTOCOL],
    why: 'the app definition is the ground every package stands on',
  },
  {
    target: 'packages/protocol/src',
    from: ABOVE_PROTOCOL,
    why: 'the wire schemas are shared by server and client, and import neither',
  },
  {
    target: REPLICA,
    from: ['packages/server', 'packages/client', 'packages/react', ...TOP],
    why: 'the replica imports only @creek/app and @creek/protocol: no runtime, disk or socket',
  },
  {
    target: SERVER,
    from: ['packages/react', ...TOP],
    why: 'the server imports only @creek/app, @creek/protocol, @creek/replica and the client session',
  },
  {
    // Every file of the server but the simulator's.
    target: `${SERVER}/{*,!(sim)/**/*}.{ts,tsx}`,
    from: ['packages/client'],
    why: 'the runtime and the CLI serve clients over the wire and use none of the SDK',
  },
  {
    target: `${SERVER}/sim`,
    from: ['packages/client'],
    except: ['./src/session'],
    why: 'the simulator runs the client’s pure session (@creek/client/session), and nothing else of the SDK',
  },
  {
    // Every file of the SDK but the in-memory cluster's folder.
    target: 'packages/client/src/{*,!(memory)/**/*}.{ts,tsx}',
    from: ['packages/replica', 'packages/server', 'packages/react', ...TOP],
    why: 'the SDK runs in browsers and apps: no replica or server code',
  },
  {
    target: 'packages/client/src/memory',
    from: ['packages/server', 'packages/react', ...TOP],
    why: 'the in-memory cluster runs the pure replica (@creek/replica), not the runtime or the simulator',
  },
  {
    target: 'packages/react/src',
    from: ['packages/replica', 'packages/server', ...TOP],
    why: 'the React hooks stand on the client SDK only',
  },
  {
    target: `${REPLICA}/common`,
    from: replica('core', 'cab', 'gossip', 'exec', 'host'),
    why: 'common holds data structures every layer may use, and uses none',
  },
  {
    target: `${REPLICA}/core`,
    from: replica('cab', 'gossip', 'exec', 'host'),
    why: 'the core is the ground of the replica: the other layers use it, not the reverse',
  },
  {
    target: `${REPLICA}/cab`,
    from: replica('gossip', 'exec', 'host'),
    why: 'CAB orders ids; the host, not CAB, wires it to gossip',
  },
  {
    target: `${REPLICA}/gossip`,
    from: replica('cab', 'exec', 'host'),
    why: 'gossip spreads Reqs; the host, not gossip, wires it to CAB',
  },
  {
    target: `${REPLICA}/exec`,
    from: replica('cab', 'gossip', 'host'),
    why: 'executors run the core’s jobs and know nothing of ordering or of the host',
  },
  {
    target: `${SERVER}/sim`,
    from: server('node'),
    why: 'the simulator drives the pure host; the runtime’s sockets and disk are not in it',
  },
  {
    target: `${SERVER}/node`,
    from: server('sim'),
    why: 'the runtime drives the host with real I/O; the simulator is the other driver',
  },
  {
    target: `${SERVER}/exec`,
    from: server('sim', 'node', 'check'),
    why: 'the worker-thread executors run ops for the runtime and know nothing of it',
  },
  {
    target: `${SERVER}/geo`,
    from: server('sim', 'node', 'check', 'exec'),
    why: 'the network profiles are data every driver and the benchmarks share; they use none of them',
  },
  {
    target: `${SERVER}/check`,
    from: server('sim', 'node'),
    why: '`creek check` runs an app’s ops as the executors do; the CLI (node/) drives it',
  },
];

/** The rules as `import-x/no-restricted-paths` zones. */
export const layerZones = LAYERS.map((l) => ({
  target: l.target,
  from: l.from,
  ...(l.except === undefined ? {} : { except: l.except }),
  message: `layering (scripts/layers.js): ${l.why}.`,
}));
