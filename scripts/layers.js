// @ts-check
/**
 * The layers of DESIGN.md as import rules: for each folder (a package's sources, or a folder of
 * the server), the folders it must never import from. eslint.config.js turns them into
 * `import-x/no-restricted-paths` zones, so an arrow that runs back up fails lint.
 *
 * Packages, from the ground up: app and protocol (the app definition and the wire) import no
 * other package; the server imports only those two; the client and React import no server code,
 * except the client's in-memory cluster, which runs the pure replica (never its runtime: no disk,
 * sockets or simulator); examples, the visualizer and the benchmarks sit on top and may use all.
 *
 * Inside the server: core is the ground; CAB and gossip stand on it and not on each other; the
 * executors run the core's ops; the host wires all four; the simulator and the runtime are the two
 * drivers of the host and never import each other.
 */

const SERVER = 'packages/server/src';
const server = (/** @type {string[]} */ ...dirs) => dirs.map((d) => `${SERVER}/${d}`);
const TOP = ['packages/examples', 'packages/visualizer', 'bench'];

/** @type {{ target: string, from: string[], why: string }[]} */
const LAYERS = [
  {
    target: 'packages/app/src',
    from: ['packages/protocol', 'packages/server', 'packages/client', 'packages/react', ...TOP],
    why: 'the app definition is the ground every package stands on',
  },
  {
    target: 'packages/protocol/src',
    from: ['packages/server', 'packages/client', 'packages/react', ...TOP],
    why: 'the wire schemas are shared by server and client, and import neither',
  },
  {
    target: SERVER,
    from: ['packages/client', 'packages/react', ...TOP],
    why: 'the server imports only @creek/app and @creek/protocol',
  },
  {
    // Every file of the SDK but the in-memory cluster's folder.
    target: 'packages/client/src/{*,!(memory)/**/*}.{ts,tsx}',
    from: ['packages/server', 'packages/react', ...TOP],
    why: 'the SDK runs in browsers and apps: no server code',
  },
  {
    target: 'packages/client/src/memory',
    from: [...server('node', 'sim'), 'packages/react', ...TOP],
    why: 'the in-memory cluster runs the pure replica (host, core, executors), not the runtime or the simulator',
  },
  {
    target: 'packages/react/src',
    from: ['packages/server', ...TOP],
    why: 'the React hooks stand on the client SDK only',
  },
  {
    target: `${SERVER}/common`,
    from: server('core', 'cab', 'gossip', 'exec', 'host', 'sim', 'node'),
    why: 'common holds data structures every layer may use, and uses none',
  },
  {
    target: `${SERVER}/core`,
    from: server('cab', 'gossip', 'exec', 'host', 'sim', 'node'),
    why: 'the core is the ground of the replica: the other layers use it, not the reverse',
  },
  {
    target: `${SERVER}/cab`,
    from: server('gossip', 'exec', 'host', 'sim', 'node'),
    why: 'CAB orders ids; the host, not CAB, wires it to gossip',
  },
  {
    target: `${SERVER}/gossip`,
    from: server('cab', 'exec', 'host', 'sim', 'node'),
    why: 'gossip spreads Reqs; the host, not gossip, wires it to CAB',
  },
  {
    target: `${SERVER}/exec`,
    from: server('cab', 'gossip', 'host', 'sim', 'node'),
    why: 'executors run the core’s jobs and know nothing of ordering, drivers or I/O layers',
  },
  {
    target: `${SERVER}/host`,
    from: server('sim', 'node'),
    why: 'the host is driven by the simulator and the runtime; it knows neither',
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
];

/** The rules as `import-x/no-restricted-paths` zones. */
export const layerZones = LAYERS.map((l) => ({
  target: l.target,
  from: l.from,
  message: `layering (scripts/layers.js): ${l.why}.`,
}));
