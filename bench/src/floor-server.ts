/**
 * The floor under Creek's latency on this stack, for bench:latency and bench:peers (floors.ts): a
 * WebSocket server that does only what any replica must do before it answers an op, and nothing
 * of Creek.
 *
 *   node --import tsx bench/src/floor-server.ts --dir DIR [--upstream ws://HOST:PORT[,ws://HOST:PORT]] [--fsync on|off]
 *
 * Per message: parse the JSON frame, commit one row to SQLite (exclusive locking and the replica
 * store's own `setDurability`, so the row survives SIGKILL as a replica's Reqs do, at the same
 * cost; with `--fsync on`, a replica's `--fsync` commit), then answer with a view: a frame the
 * size of a tentative one, at level stable, so that `@creek/client` takes it as the final answer
 * of a weak or a strong op alike and forgets the op (bench:peers drives the floors through it;
 * bench:latency's raw client takes any frame as the answer). A client's hello is answered with a
 * welcome, and nothing is committed for it. The frames of one turn of the event loop are
 * committed in one transaction, as a replica commits a turn's writes: one op at a time that is a
 * commit per op; with many in flight, one sync covers many, so the floor holds for throughput too.
 *
 * With `--upstream`, it is the first link of a relay instead: after its commit it forwards the
 * frame to the upstream floor server, and when that answers (after its own commit), commits once
 * more and answers the client. Client → A → B → A → client with three commits in sequence is the
 * least a stable answer takes from a replica that needs one other replica's durable vote (3
 * replicas, majority 2): the origin's Req, the other replica's accept, the origin's decision.
 * `--upstream URL,URL` forwards to both and answers after the first answer, reading and dropping
 * the second (as an origin drops a vote past its majority): the same path, with the third
 * member's work — receiving, committing and answering every op — on the same machine's cores.
 *
 * Prints `port N` once listening; exits when its stdin closes (its parent went away).
 */
import { MAX_FRAME_BYTES } from '@creek/protocol';
import { setDurability } from '@creek/server/node';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import WebSocket, { WebSocketServer } from 'ws';
import { flagPairs } from './cli-flags.js';

const USAGE =
  'node --import tsx bench/src/floor-server.ts --dir DIR [--upstream ws://HOST:PORT[,ws://HOST:PORT]] [--fsync on|off]';
const fail = (message: string): never => {
  console.error(`floor-server: ${message}`);
  process.exit(2);
};
const flags: { dir?: string; upstream?: string; fsync?: string } = {};
for (const [name, raw] of flagPairs(
  process.argv.slice(2),
  USAGE,
  (n) => n === 'dir' || n === 'upstream' || n === 'fsync',
  fail,
))
  flags[name as 'dir' | 'upstream' | 'fsync'] = raw;
if (flags.fsync !== undefined && flags.fsync !== 'on' && flags.fsync !== 'off')
  fail(`--fsync must be on or off, got '${flags.fsync}'`);
const dir = flags.dir ?? fail(`--dir DIR is required\n\n${USAGE}`);
const upstreamUrls = flags.upstream?.split(',') ?? [];
if (upstreamUrls.length > 2) fail('--upstream takes at most two URLs (a relay of 3 members)');
for (const url of upstreamUrls)
  if (!/^ws:\/\/[^/\s:?#]+:\d+$/.test(url))
    fail(`--upstream takes one or two ws://HOST:PORT URLs, comma-separated, got '${url}'`);
if (new Set(upstreamUrls).size < upstreamUrls.length)
  fail('--upstream names the same server twice: a relay of 3 members forwards to two');

// Its own file: a benchmark runs several floor servers in one directory (and removes it).
const db = new Database(
  join(dir, `${upstreamUrls.length === 0 ? 'floor' : 'relay'}-${process.pid}.db`),
);
db.pragma('locking_mode = EXCLUSIVE');
setDurability(db, flags.fsync === 'on');
db.exec('CREATE TABLE IF NOT EXISTS log (seq INTEGER PRIMARY KEY, body TEXT NOT NULL)');
const insert = db.prepare('INSERT INTO log (body) VALUES (?)');

interface Frame {
  t?: string;
  opId?: string;
}

/** What a replica answers `@creek/client`'s hello with (only the fields the client reads). */
const WELCOME = JSON.stringify({
  t: 'welcome',
  version: 1,
  replica: 0,
  levels: ['weak', 'strong'],
  ops: ['kv.put', 'kv.get'],
});

/**
 * Frames received in this turn of the event loop, committed together at its end (one
 * transaction, as a replica commits a turn's writes: with many ops in flight, one sync covers
 * many), then handled in the order they came.
 */
let turn: { readonly text: string; readonly then: (seq: number) => void }[] = [];
const commitAll = db.transaction((texts: readonly string[]) =>
  texts.map((text) => Number(insert.run(text).lastInsertRowid)),
);

/** Makes `text` durable with the rest of the turn, then calls `then` with its row number. */
function durable(text: string, then: (seq: number) => void): void {
  if (turn.length === 0) setImmediate(commitTurn);
  turn.push({ text, then });
}

function commitTurn(): void {
  const frames = turn;
  turn = [];
  const seqs = commitAll(frames.map((f) => f.text));
  for (const [i, f] of frames.entries()) f.then(seqs[i]!);
}

/** A view, stable: the final answer to any op (see the header). */
function view(frame: Frame, n: number): string {
  return JSON.stringify({
    t: 'view',
    opId: frame.opId,
    level: 'stable',
    outcome: { ok: true, value: n },
    id: { replica: 0, eventNo: n },
  });
}

/** Relay mode: ops forwarded upstream, answered when the first upstream answers. */
const waiting = new Map<string, (reply: Frame, seq: number) => void>();
const upstreams = upstreamUrls.map((url) => {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  ws.on('message', (data) => {
    const text = (data as Buffer).toString();
    const frame = JSON.parse(text) as Frame;
    const k = frame.opId ?? '';
    const done = waiting.get(k);
    // A second member's answer to an op already answered: read and dropped.
    if (done === undefined) return;
    waiting.delete(k);
    durable(text, (seq) => done(frame, seq));
  });
  ws.on('error', (err) => {
    console.error(`floor-server: upstream ${url}: ${err.message}`);
    process.exit(1);
  });
  // An upstream that goes away would leave every op in flight unanswered: the relay stops with it.
  ws.on('close', () => {
    console.error(`floor-server: upstream ${url} closed the connection`);
    process.exit(1);
  });
  return ws;
});

/** A client's frame: a JSON object, or null (the connection is then closed, 1007). */
function clientFrame(text: string): Frame | null {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Frame) : null;
  } catch {
    return null;
  }
}

// Loopback only, and no token: it stands for a replica's least work per op, which a benchmark
// measures on this machine. Frames past the protocol's limit close the connection (ws: 1009).
const wss = new WebSocketServer({
  host: '127.0.0.1',
  port: 0,
  perMessageDeflate: false,
  maxPayload: MAX_FRAME_BYTES,
});
wss.on('connection', (ws) => {
  // A frame past the limit or a broken connection: ws closes it; nothing else to do.
  ws.on('error', () => undefined);
  ws.on('message', (data) => {
    const text = (data as Buffer).toString();
    const frame = clientFrame(text);
    if (frame === null) {
      ws.close(1007, 'frames must be JSON objects');
      return;
    }
    if (frame.t === 'hello') {
      ws.send(WELCOME);
      return;
    }
    durable(text, (seq) => {
      if (upstreams.length === 0) {
        ws.send(view(frame, seq));
        return;
      }
      // Answered once an upstream answered and its answer, too, is durable here.
      waiting.set(frame.opId ?? '', (reply, n) => ws.send(view(reply, n)));
      for (const u of upstreams) u.send(text);
    });
  });
});

const ready = (): void => {
  const address = wss.address();
  if (typeof address === 'object' && address !== null) console.log(`port ${address.port}`);
};
wss.on('listening', () => {
  void Promise.all(
    upstreams.map((u) =>
      u.readyState === WebSocket.OPEN
        ? undefined
        : new Promise<void>((resolve) => u.once('open', () => resolve())),
    ),
  ).then(ready);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
