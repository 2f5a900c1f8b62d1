import { isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeClientFrame, decodePeerFrame, PROTOCOL_VERSION } from '@creek/protocol';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DEFAULT_EDGE_LIMITS, type EdgeLimits } from '../../src/node/edge-limits.js';
import { VIOLATION_KINDS } from '../../src/node/edge-violations.js';
import { LocalCluster } from '../../src/node/local-cluster.js';
import { acceptorProof, dialerProof, newNonce } from '../../src/node/peer-auth.js';
import { RawClient, within } from './cluster-harness.js';
import {
  closeCode,
  frame,
  OP,
  rawTcp,
  rawUpgrade,
  textFrames,
  type FrameOptions,
  type RawSocket,
} from './raw-socket.js';

/**
 * The network edge under attack: one real 3-replica cluster takes malformed WebSocket frames,
 * floods, slow and half-sent upgrades, hundreds of idle sockets, bad tokens, forged and replayed
 * peer answers, and frames wrong for the connection's state. After every group of attacks each
 * replica still answers /health, the cluster orders a strong op, and the replicas converge to one
 * digest. The limits are the defaults except shorter waits, so the suite does not sit out 5 s
 * deadlines.
 */
const LIMITS: Partial<EdgeLimits> = {
  helloDeadlineMs: 2_000,
  unauthenticatedTotal: 128,
  headersTimeoutMs: 1_500,
  requestTimeoutMs: 3_000,
  httpCheckIntervalMs: 250,
  closeGraceMs: 500,
};
const PER_ADDRESS = DEFAULT_EDGE_LIMITS.unauthenticatedPerAddress;
const TOTAL = LIMITS.unauthenticatedTotal!;
const PRE_AUTH_FRAME = DEFAULT_EDGE_LIMITS.preAuthFrameBytes;
const PRE_AUTH_BYTES = DEFAULT_EDGE_LIMITS.preAuthBytes;
/** ws's maxPayload on /client (4 × MAX_FRAME_BYTES) and /peer (replica-server.ts). */
const PEER_MAX_PAYLOAD = 16 << 20;
/** Guard for anything the replica must close: far above every limit above. */
const CLOSE_GUARD_MS = 10_000;

const CLOSE = { protocol: 1002, invalidPayload: 1007, policy: 1008, tooBig: 1009 } as const;

let cluster: LocalCluster;
let secret: string;
beforeAll(async () => {
  cluster = await LocalCluster.start({ replicas: 3, logLevel: 'silent', edgeLimits: LIMITS });
  secret = readFileSync(join(cluster.dir, 'cluster.secret'), 'utf8').trim();
}, 60_000);
afterAll(async () => {
  const total = [...attacks.values()].reduce((a, b) => a + b, 0);
  const kinds = [...attacks].map(([k, n]) => `${k} ${n}`).join(', ');
  const verdict =
    survivedGroups === GROUPS
      ? 'all replicas up, strong ops ordered, digests equal after each group'
      : `FAILED: ${GROUPS - survivedGroups} of ${GROUPS} groups did not pass their checks`;
  console.log(`adversarial: ${total} attacks (${kinds}): ${verdict}`);
  await cluster?.stop(1_000);
});

/** Groups of attacks, each ending with `survived` (every test below but the last). */
const GROUPS = 11;
const attacks = new Map<string, number>();
let survivedGroups = 0;
function attack(kind: string): void {
  attacks.set(kind, (attacks.get(kind) ?? 0) + 1);
}

const port = (i: number): number => cluster.basePort + i;
const replica = fc.nat({ max: 2 });
const path = fc.constantFrom('/client', '/peer');

/** After a group: every replica up, a strong op ordered (its stable view), digests equal. */
async function survived(group: string): Promise<void> {
  for (let i = 0; i < cluster.size; i++) {
    const r = await fetch(`${cluster.httpUrl(i)}/health`);
    expect(r.status, `replica ${i} /health after ${group}`).toBe(200);
  }
  const c = await RawClient.connect(cluster.url(survivedGroups % cluster.size), cluster.token);
  const op = c.invoke('kv.increment', { key: 'adversarial' }, 'strong');
  await within(op.done, 15_000, `a strong op after ${group}`);
  const last = op.views.frames.at(-1);
  expect(
    last?.t === 'confirm' || (last?.t === 'view' && last.level === 'stable'),
    `the strong op after ${group} got its stable view: ${JSON.stringify(op.views.frames)}`,
  ).toBe(true);
  c.close();
  await cluster.converged(20_000);
  survivedGroups++;
}

/** Resolves once the replica closed the connection; returns its close code (null: none sent). */
async function closedBy(raw: RawSocket, what: string): Promise<number | null> {
  await within(raw.closed, CLOSE_GUARD_MS, `the replica to close the connection (${what})`);
  return closeCode(raw);
}

async function until(check: () => boolean, what: string, ms = CLOSE_GUARD_MS): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A hello frame with `token` (none when undefined), naming its newest version or not. */
const helloWith = (token: string | undefined, newest = false): Buffer =>
  frame(
    OP.text,
    JSON.stringify({
      t: 'hello',
      version: 1,
      ...(newest ? { newest: PROTOCOL_VERSION } : {}),
      ...(token === undefined ? {} : { token }),
    }),
  );
const hello = (): Buffer => helloWith(cluster.token);

/** A raw /client connection past its hello (authenticated). */
async function greeted(i: number): Promise<RawSocket> {
  const raw = await rawUpgrade(port(i), '/client');
  raw.socket.write(hello());
  await until(() => textFrames(raw).some((f) => f.t === 'welcome'), 'welcome');
  return raw;
}

/** A raw connection on `where`: before authentication, or a /client one after its hello. */
function open(i: number, where: '/client' | '/peer' | 'greeted'): Promise<RawSocket> {
  return where === 'greeted' ? greeted(i) : rawUpgrade(port(i), where);
}
const where = fc.constantFrom<'/client' | '/peer' | 'greeted'>('/client', '/peer', 'greeted');

it('invalid UTF-8 in text frames (whole or fragmented) closes that connection with 1007', async () => {
  const invalid = fc
    .uint8Array({ minLength: 1, maxLength: 64 })
    .filter((b) => !isUtf8(b))
    .map((b) => Buffer.from(b));
  await fc.assert(
    fc.asyncProperty(invalid, replica, where, fc.boolean(), async (bytes, i, w, fragmented) => {
      attack('utf8');
      const raw = await open(i, w);
      if (fragmented && bytes.length > 1) {
        const cut = bytes.length >> 1;
        raw.socket.write(frame(OP.text, bytes.subarray(0, cut), { fin: false }));
        raw.socket.write(frame(OP.continuation, bytes.subarray(cut)));
      } else raw.socket.write(frame(OP.text, bytes));
      expect(await closedBy(raw, 'invalid UTF-8')).toBe(CLOSE.invalidPayload);
    }),
    { numRuns: 40 },
  );
  await survived('utf8');
});

it('frames over the limits close with 1009: claimed lengths past maxPayload, and before authentication past 16 KiB', async () => {
  // A header claiming more than maxPayload: refused on the header alone.
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: PEER_MAX_PAYLOAD + 1, max: 2 ** 52 }),
      replica,
      where,
      async (claimed, i, w) => {
        attack('oversize');
        const raw = await open(i, w);
        raw.socket.write(frame(OP.binary, Buffer.alloc(16), { claimedLength: claimed }));
        expect(await closedBy(raw, `a frame claiming ${claimed} bytes`)).toBe(CLOSE.tooBig);
      },
    ),
    { numRuns: 15 },
  );
  // Before authentication: a whole frame over the small limit, or a claimed one whose bytes keep
  // coming (ws would buffer up to maxPayload), is cut long before maxPayload.
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: PRE_AUTH_FRAME + 1, max: 4 << 20 }),
      replica,
      path,
      async (claimed, i, p) => {
        attack('oversize');
        const raw = await rawUpgrade(port(i), p);
        const sent = Math.min(claimed, PRE_AUTH_BYTES + (16 << 10));
        const body = Buffer.alloc(sent, 'a');
        raw.socket.write(frame(OP.text, body, { claimedLength: claimed }));
        expect(await closedBy(raw, `${claimed} bytes before authenticating`)).toBe(CLOSE.tooBig);
      },
    ),
    { numRuns: 15 },
  );
  await survived('oversize');
});

it('fragmentation errors close with 1002; control frames between fragments are legal', async () => {
  const broken: { name: string; frames: () => Buffer[] }[] = [
    { name: 'continuation without a start', frames: () => [frame(OP.continuation, 'x')] },
    {
      name: 'a new message inside a fragmented one',
      frames: () => [frame(OP.text, '{"t":', { fin: false }), frame(OP.text, '"hello"}')],
    },
    { name: 'a fragmented ping', frames: () => [frame(OP.ping, 'a', { fin: false })] },
    { name: 'a ping of 126 bytes', frames: () => [frame(OP.ping, Buffer.alloc(126))] },
    { name: 'a close frame of 1 byte', frames: () => [frame(OP.close, Buffer.from([3]))] },
    {
      name: 'a close frame with code 1005',
      frames: () => [frame(OP.close, Buffer.from([0x03, 0xed]))],
    },
  ];
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...broken), replica, where, async (b, i, w) => {
      attack('fragments');
      const raw = await open(i, w);
      for (const f of b.frames()) raw.socket.write(f);
      expect(await closedBy(raw, b.name)).toBe(CLOSE.protocol);
    }),
    { numRuns: 30 },
  );
  // A hello in fragments with pings between them is still a hello (RFC 6455 §5.4).
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 2, max: 6 }), replica, async (parts, i) => {
      attack('fragments');
      const raw = await rawUpgrade(port(i), '/client');
      const text = Buffer.from(JSON.stringify({ t: 'hello', version: 1, token: cluster.token }));
      const step = Math.ceil(text.length / parts);
      for (let at = 0; at < text.length; at += step) {
        const last = at + step >= text.length;
        raw.socket.write(
          frame(at === 0 ? OP.text : OP.continuation, text.subarray(at, at + step), { fin: last }),
        );
        if (!last) raw.socket.write(frame(OP.ping, 'between'));
      }
      await until(() => textFrames(raw).some((f) => f.t === 'welcome'), 'a fragmented hello');
      raw.socket.destroy();
    }),
    { numRuns: 10 },
  );
  // Random sequences of frames: whatever the replica makes of them, it survives.
  const anyFrame = fc.record({
    opcode: fc.constantFrom(OP.continuation, OP.text, OP.binary, OP.ping, OP.pong),
    fin: fc.boolean(),
    payload: fc.uint8Array({ maxLength: 40 }),
  });
  await fc.assert(
    fc.asyncProperty(
      fc.array(anyFrame, { minLength: 1, maxLength: 8 }),
      replica,
      where,
      async (fs, i, w) => {
        attack('fragments');
        const raw = await open(i, w);
        for (const f of fs)
          raw.socket.write(frame(f.opcode, Buffer.from(f.payload), { fin: f.fin }));
        await new Promise((r) => setTimeout(r, 20));
        raw.socket.destroy();
      },
    ),
    { numRuns: 25 },
  );
  await survived('fragments');
});

it('reserved opcodes, reserved bits and unmasked frames close with 1002', async () => {
  const bad = fc.oneof(
    fc
      .constantFrom(3, 4, 5, 6, 7, 0xb, 0xc, 0xd, 0xe, 0xf)
      .map((opcode) => ({ opcode, o: {} as FrameOptions })),
    fc.integer({ min: 1, max: 7 }).map((rsv) => ({ opcode: OP.text, o: { rsv } as FrameOptions })),
    fc.constant({ opcode: OP.text, o: { masked: false } as FrameOptions }),
  );
  await fc.assert(
    fc.asyncProperty(bad, replica, where, async ({ opcode, o }, i, w) => {
      attack('opcodes');
      const raw = await open(i, w);
      raw.socket.write(frame(opcode, '{}', o));
      expect(await closedBy(raw, `opcode ${opcode} ${JSON.stringify(o)}`)).toBe(CLOSE.protocol);
    }),
    { numRuns: 45 },
  );
  await survived('opcodes');
});

it('floods: pings or small frames before authentication close with 1008; after it, ws cuts a ping burst and paced pings are answered', async () => {
  const limit = DEFAULT_EDGE_LIMITS.preAuthFrames;
  for (const p of ['/client', '/peer'] as const)
    for (let i = 0; i < cluster.size; i++) {
      attack('flood');
      const pings = await rawUpgrade(port(i), p);
      pings.socket.write(Buffer.concat(Array.from({ length: 200 }, () => frame(OP.ping, 'p'))));
      expect(await closedBy(pings, `200 pings on ${p}`)).toBe(CLOSE.policy);
      // ws answers a ping before the guard counts it: the one over the limit gets its pong too.
      expect(pings.frames.filter((f) => f.opcode === OP.pong).length).toBeLessThanOrEqual(
        limit + 1,
      );

      attack('flood');
      const small = await rawUpgrade(port(i), p);
      const invoke = JSON.stringify({
        t: 'invoke',
        opId: 'x',
        op: 'kv.get',
        args: {},
        level: 'weak',
      });
      small.socket.write(
        Buffer.concat(
          Array.from({ length: 100 }, () => frame(OP.text, p === '/client' ? invoke : '{}')),
        ),
      );
      expect(await closedBy(small, `100 frames before authenticating on ${p}`)).toBe(CLOSE.policy);
    }
  for (let i = 0; i < cluster.size; i++) {
    // Authenticated, a burst of pings faster than their pongs leave is cut by ws itself
    // (maxPendingAutoPongs, 60): no close frame, and the replica carries on.
    attack('flood');
    const burst = await greeted(i);
    burst.socket.write(Buffer.concat(Array.from({ length: 2_000 }, () => frame(OP.ping, 'p'))));
    expect(await closedBy(burst, '2,000 pings at once')).toBeNull();
    // Pings paced by their pongs are answered, and the connection still serves.
    attack('flood');
    const raw = await greeted(i);
    const pongs = (): number => raw.frames.filter((f) => f.opcode === OP.pong).length;
    for (let round = 1; round <= 20; round++) {
      raw.socket.write(Buffer.concat(Array.from({ length: 25 }, () => frame(OP.ping, 'p'))));
      await until(() => pongs() === round * 25, `pongs of round ${round}`);
    }
    raw.socket.write(
      frame(
        OP.text,
        JSON.stringify({
          t: 'invoke',
          opId: 'after-pings',
          op: 'kv.increment',
          args: { key: 'flood' },
          level: 'weak',
        }),
      ),
    );
    await until(() => textFrames(raw).some((f) => f.t === 'view'), 'a view after 500 pings');
    raw.socket.destroy();
  }
  await survived('flood');
});

it('slow and half-sent upgrade requests are cut by the HTTP timeouts', async () => {
  const sockets = await Promise.all(
    Array.from({ length: 15 }, async (_, n) => {
      const i = n % cluster.size;
      const s = await rawTcp(port(i));
      if (n % 3 === 0) {
        attack('slow-upgrade');
        // Half the request, then nothing.
        s.socket.write('GET /client HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n');
      } else if (n % 3 === 1) {
        attack('slow-upgrade');
        // One header line every 200 ms, never the end of the head (slowloris).
        s.socket.write('GET /peer HTTP/1.1\r\n');
        const trickle = setInterval(() => {
          if (!s.socket.destroyed) s.socket.write(`X-Slow-${Date.now()}: 1\r\n`);
        }, 200);
        void s.closed.then(() => clearInterval(trickle));
      } else {
        attack('slow-upgrade');
        // Connected, silent.
      }
      return s;
    }),
  );
  await Promise.all(
    sockets.map((s) => within(s.closed, CLOSE_GUARD_MS, 'a slow upgrade to be cut')),
  );
  await survived('slow-upgrade');
});

it('idle unauthenticated sockets: over the caps the upgrade is refused with 503, the rest closed with 1008 at the hello deadline', async () => {
  // 100 each from three addresses, one address after another: 64 from the first (the per-address
  // cap), 64 from the second (then the total of 128 is reached), none from the third.
  const results: RawSocket[][] = [];
  for (const address of ['127.0.0.2', '127.0.0.3', '127.0.0.4']) {
    results.push(
      await Promise.all(
        Array.from({ length: 100 }, () => {
          attack('idle');
          return rawUpgrade(port(1), '/client', { localAddress: address });
        }),
      ),
    );
  }
  const accepted = results.map((r) => r.filter((s) => s.status.includes('101')));
  const refused = results.map((r) => r.filter((s) => s.status.includes('503')));
  expect(accepted.map((a) => a.length)).toEqual([PER_ADDRESS, TOTAL - PER_ADDRESS, 0]);
  expect(refused.map((r) => r.length)).toEqual([
    100 - PER_ADDRESS,
    100 - (TOTAL - PER_ADDRESS),
    100,
  ]);
  // Replicas 0 and 2 hold no slot for them: a client gets in there at once.
  const other = await RawClient.connect(cluster.url(0), cluster.token);
  other.close();
  const codes = await Promise.all(accepted.flat().map((s) => closedBy(s, 'an idle socket')));
  expect(new Set(codes)).toEqual(new Set([CLOSE.policy]));
  // Their slots are free again: the third address gets in.
  let again: RawSocket | null = null;
  for (let n = 0; n < 50 && again === null; n++) {
    const s = await rawUpgrade(port(1), '/client', { localAddress: '127.0.0.4' });
    if (s.status.includes('101')) again = s;
    else await new Promise((r) => setTimeout(r, 100));
  }
  expect(again, 'a connection once the idle ones were closed').not.toBeNull();
  again?.socket.destroy();
  // A peer that never answers the challenge is closed the same way.
  const peers = await Promise.all(
    Array.from({ length: 5 }, () => {
      attack('idle');
      return rawUpgrade(port(2), '/peer');
    }),
  );
  for (const p of peers) expect(await closedBy(p, 'an idle peer socket')).toBe(CLOSE.policy);
  await survived('idle');
});

it('wrong and missing tokens on /client are refused with an unauthorized error and 1008', async () => {
  const wrong = fc.oneof(
    fc.string({ maxLength: 80 }),
    fc.constant(undefined),
    fc.constant(''),
    fc.constant('x').map(() => `${cluster.token}x`),
    fc.constant('x').map(() => cluster.token.slice(0, -1)),
    fc.constant('x').map(() => cluster.token.toUpperCase()),
  );
  await fc.assert(
    fc.asyncProperty(
      wrong.filter((t) => t !== cluster.token),
      replica,
      fc.boolean(),
      async (token, i, newest) => {
        attack('token');
        const raw = await rawUpgrade(port(i), '/client');
        raw.socket.write(helloWith(token, newest));
        expect(await closedBy(raw, `token ${JSON.stringify(token)}`)).toBe(CLOSE.policy);
        expect(textFrames(raw).map((f) => f.code)).toEqual(['unauthorized']);
      },
    ),
    { numRuns: 30 },
  );
  await survived('token');
});

it('a hello without a token whose versions the replica does not speak learns the versions, and nothing more', async () => {
  // The versions are negotiated first, as TLS and SSH do: a client told to upgrade needs no
  // token to hear it, and the refusal says nothing but the ranges.
  const raw = await rawUpgrade(port(0), '/client');
  raw.socket.write(frame(OP.text, JSON.stringify({ t: 'hello', version: 500, newest: 501 })));
  await until(() => textFrames(raw).length > 0, 'an answer to the hello');
  const [answer, ...more] = textFrames(raw) as { t: string; code?: string; message?: string }[];
  expect(answer).toMatchObject({ t: 'error', code: 'version' });
  expect(answer!.message).toMatch(/speaks client protocol .*the client 500 to 501/);
  expect(more.every((f) => f.t !== 'welcome' && f.t !== 'authenticated')).toBe(true);
  raw.socket.destroy();
});

it('replayed, forged and foreign peer answers to the challenge are refused with 1008', async () => {
  /** Connects to /peer of replica i, answers its challenge with `answer(nonce)`. */
  const tryPeer = (
    i: number,
    answer: (nonce: string) => unknown,
  ): Promise<{ code: number; frames: string[] }> =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port(i)}/peer`);
      const frames: string[] = [];
      ws.on('error', reject);
      ws.on('message', (d) => {
        const text = d.toString();
        const f = decodePeerFrame(text);
        if (f.ok && f.frame.t === 'challenge') ws.send(JSON.stringify(answer(f.frame.nonce)));
        else frames.push(text);
      });
      ws.on('close', (code) => resolve({ code, frames }));
    });
  const challenge = (i: number): Promise<string> =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port(i)}/peer`);
      ws.on('error', reject);
      ws.on('message', (d) => {
        const f = decodePeerFrame(d.toString());
        if (f.ok && f.frame.t === 'challenge') {
          resolve(f.frame.nonce);
          ws.terminate();
        }
      });
    });
  const expectRefused = async (
    result: Promise<{ code: number; frames: string[] }>,
    what: string,
  ): Promise<void> => {
    const { code, frames } = await within(result, CLOSE_GUARD_MS, what);
    expect(code, what).toBe(CLOSE.policy);
    expect(
      frames.some((f) => f.includes('unauthorized') || f.includes('bad-frame')),
      what,
    ).toBe(true);
  };
  const other = (i: number): number => (i + 1) % cluster.size;
  await fc.assert(
    fc.asyncProperty(replica, async (i) => {
      attack('peer-auth');
      // A real replica's answer, recorded for another connection's nonce: useless here.
      const recorded = dialerProof(secret, await challenge(i), other(i), i);
      await expectRefused(
        tryPeer(i, () => ({ t: 'auth', from: other(i), mac: recorded, nonce: newNonce() })),
        'a replayed answer',
      );
    }),
    { numRuns: 6 },
  );
  await fc.assert(
    fc.asyncProperty(
      replica,
      fc.stringMatching(/^[0-9a-f]{64}$/),
      fc.nat({ max: 2 }),
      async (i, mac, from) => {
        attack('peer-auth');
        await expectRefused(
          tryPeer(i, () => ({ t: 'auth', from, mac, nonce: newNonce() })),
          'a forged mac',
        );
      },
    ),
    { numRuns: 10 },
  );
  await fc.assert(
    fc.asyncProperty(replica, fc.integer({ min: 3, max: 255 }), async (i, from) => {
      attack('peer-auth');
      // The right HMAC, for a replica id that is not in the cluster.
      await expectRefused(
        tryPeer(i, (nonce) => ({
          t: 'auth',
          from,
          mac: dialerProof(secret, nonce, from, i),
          nonce: newNonce(),
        })),
        `auth as replica ${from}, not a peer`,
      );
    }),
    { numRuns: 6 },
  );
  await fc.assert(
    fc.asyncProperty(replica, async (i) => {
      attack('peer-auth');
      // One peer's answer presented as another's.
      await expectRefused(
        tryPeer(i, (nonce) => ({
          t: 'auth',
          from: other(i),
          mac: dialerProof(secret, nonce, i, other(i)),
          nonce: newNonce(),
        })),
        'an answer under another id',
      );
    }),
    { numRuns: 6 },
  );
  await fc.assert(
    fc.asyncProperty(replica, async (i) => {
      attack('peer-auth');
      // A proof a replica gave when it dialed a third one, relayed here by an impostor on that
      // third replica's URL: bound to the replica dialed, it is refused.
      const third = other(other(i));
      await expectRefused(
        tryPeer(i, (nonce) => ({
          t: 'auth',
          from: other(i),
          mac: dialerProof(secret, nonce, other(i), third),
          nonce: newNonce(),
        })),
        'a proof relayed from a connection to another replica',
      );
      attack('peer-auth');
      // An accepting side's proof reflected as a dialer's.
      await expectRefused(
        tryPeer(i, (nonce) => ({
          t: 'auth',
          from: other(i),
          mac: acceptorProof(secret, nonce, other(i), i),
          nonce: newNonce(),
        })),
        'an acceptor proof reflected',
      );
    }),
    { numRuns: 4 },
  );
  await fc.assert(
    fc.asyncProperty(replica, fc.string({ maxLength: 100 }), async (i, mac) => {
      attack('peer-auth');
      await expectRefused(
        tryPeer(i, () => ({ t: 'auth', from: 0, mac, nonce: newNonce() })),
        'a malformed mac',
      );
    }),
    { numRuns: 6 },
  );
  await survived('peer-auth');
});

it('frames wrong for the state of the connection: invoke before hello, a second hello, peer messages before auth, JSON of the wrong schema', async () => {
  const invoke = JSON.stringify({
    t: 'invoke',
    opId: 'early',
    op: 'kv.increment',
    args: { key: 'early' },
    level: 'strong',
  });
  await fc.assert(
    fc.asyncProperty(replica, async (i) => {
      attack('state');
      // An invoke before hello is answered with an error; the hello after it still counts.
      const raw = await rawUpgrade(port(i), '/client');
      raw.socket.write(frame(OP.text, invoke));
      await until(() => textFrames(raw).some((f) => f.code === 'out-of-order'), 'out-of-order');
      raw.socket.write(hello());
      await until(
        () => textFrames(raw).some((f) => f.t === 'welcome'),
        'welcome after an early invoke',
      );
      // A second hello is refused; the connection stays.
      raw.socket.write(hello());
      await until(
        () => textFrames(raw).filter((f) => f.code === 'out-of-order').length === 2,
        'a second hello refused',
      );
      raw.socket.destroy();
    }),
    { numRuns: 6 },
  );
  // Gossip, Paxos and transfers before auth: a prepare with a huge ballot would depose the leader
  // if heard, an ask would be answered with the replica's state.
  const peerMessage = fc.constantFrom(
    { t: 'paxos', msg: { type: 'prepare', ballot: 1_000_000, from: 0 } },
    {
      t: 'paxos',
      msg: {
        type: 'heartbeat',
        ballot: 1_000_000,
        leading: true,
        decidedBelow: 0,
        deliveredBelow: 0,
        promised: 1_000_000,
        knownBelow: 0,
      },
    },
    { t: 'gossip', msg: { kind: 'pull', ids: [] } },
    { t: 'gossip', msg: { kind: 'summary', seen: [], reply: true } },
    // Asking for a replica's checkpoint (state transfer) before auth would hand out its state.
    { t: 'transfer', msg: { type: 'ask', session: 1, next: 0 } },
    { t: 'welcome', replica: 0 },
    { t: 'batch', frames: [] },
  );
  await fc.assert(
    fc.asyncProperty(replica, peerMessage, async (i, m) => {
      attack('state');
      const raw = await rawUpgrade(port(i), '/peer');
      raw.socket.write(frame(OP.text, JSON.stringify(m)));
      expect(await closedBy(raw, `${m.t} before auth`)).toBe(CLOSE.policy);
    }),
    { numRuns: 12 },
  );
  // Well-formed JSON of the wrong schema: an error frame on /client, a 1008 close on /peer.
  const wrongSchema = fc
    .json({ maxDepth: 3 })
    .filter((s) => !decodeClientFrame(s).ok && !decodePeerFrame(s).ok);
  await fc.assert(
    fc.asyncProperty(wrongSchema, replica, path, async (json, i, p) => {
      attack('state');
      const raw = await rawUpgrade(port(i), p);
      raw.socket.write(frame(OP.text, json));
      if (p === '/peer') expect(await closedBy(raw, `${json} on /peer`)).toBe(CLOSE.policy);
      else {
        await until(
          () => textFrames(raw).some((f) => f.code === 'bad-frame'),
          `bad-frame for ${json}`,
        );
        raw.socket.destroy();
      }
    }),
    { numRuns: 30 },
  );
  await survived('state');
});

it('HTTP: random paths, methods and admin tokens, and upgrades the replica does not serve, are answered or closed', async () => {
  await fc.assert(
    fc.asyncProperty(
      replica,
      fc.constantFrom('GET', 'POST', 'PUT', 'DELETE'),
      fc.oneof(
        fc.webPath(),
        fc.constantFrom('/admin/pause', '/admin/block?peer=1', '/status', '/metrics'),
      ),
      fc.option(fc.string({ maxLength: 40 }).filter((s) => /^[\x21-\x7e]*$/.test(s))),
      async (i, method, p, token) => {
        attack('http');
        const r = await fetch(`${cluster.httpUrl(i)}${p.startsWith('/') ? p : `/${p}`}`, {
          method,
          ...(token === null ? {} : { headers: { authorization: `Bearer ${token}` } }),
        });
        await r.arrayBuffer();
        expect(r.status).toBeGreaterThanOrEqual(200);
      },
    ),
    { numRuns: 30 },
  );
  // Request targets that are not plain paths (`GET //` ended the process: new URL threw).
  for (const target of ['//', '//@', '//[', '*', 'http://elsewhere/health', '/%zz', '/..']) {
    attack('http');
    for (let i = 0; i < cluster.size; i++) {
      const s = await rawTcp(port(i));
      s.socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
      await within(s.closed, CLOSE_GUARD_MS, `an answer to GET ${target}`);
      expect(Buffer.concat(s.received).toString()).toMatch(/^HTTP\/1\.1 [1-5]\d\d /);
    }
  }
  for (const p of ['/', '/nope', '/client/x', '/PEER']) {
    attack('http');
    const raw = await rawUpgrade(port(0), p);
    await within(raw.closed, CLOSE_GUARD_MS, `the upgrade of ${p} to be refused`);
    expect(raw.status).not.toContain('101');
  }
  await survived('http');
});

it('every kind of violation the suite made is counted, per endpoint, in /status and /metrics', async () => {
  const sum = (kind: string, endpoint: 'clients' | 'network'): Promise<number> =>
    Promise.all(
      Array.from({ length: cluster.size }, async (_, i) => {
        const s = (await (await cluster.monitor(i, '/status')).json()) as Record<
          'clients' | 'network',
          { violations: Record<string, number> }
        >;
        return s[endpoint].violations[kind] ?? 0;
      }),
    ).then((n) => n.reduce((a, b) => a + b, 0));
  for (const kind of [
    'protocol',
    'invalidPayload',
    'tooBig',
    'badFrame',
    'auth',
    'helloDeadline',
    'flood',
  ])
    expect(await sum(kind, 'network'), `peer ${kind}`).toBeGreaterThan(0);
  // Every kind there is, at the client endpoint.
  for (const kind of VIOLATION_KINDS)
    expect(await sum(kind, 'clients'), `client ${kind}`).toBeGreaterThan(0);
  const metrics = await cluster.metrics(1);
  expect(metrics).toMatch(
    /creek_edge_violations_total\{endpoint="client",kind="overCap",replica="1"\} 1\d\d/,
  );
  expect(metrics).toMatch(/creek_edge_unauthenticated_connections\{replica="1"\} \d+/);
});
