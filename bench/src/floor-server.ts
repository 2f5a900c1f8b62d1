/**
 * The floor under Creek's latency on this stack, for bench:latency: a WebSocket server that does
 * only what any replica must do before it answers an op, and nothing of Creek.
 *
 *   node --import tsx bench/src/floor-server.ts --dir DIR [--upstream ws://HOST:PORT]
 *
 * Per message: parse the JSON frame, commit one row to SQLite (exclusive locking and the replica
 * store's own `setDurability`, so the row survives SIGKILL as a replica's Reqs do, at the same
 * cost), then answer with a frame the size of a tentative view.
 *
 * With `--upstream`, it is the first link of a relay instead: after its commit it forwards the
 * frame to the upstream floor server, and when that answers (after its own commit), commits once
 * more and answers the client. Client → A → B → A → client with three commits in sequence is the
 * least a stable answer takes from a replica that needs one other replica's durable vote (3
 * replicas, majority 2): the origin's Req, the other replica's accept, the origin's decision.
 *
 * Prints `port N` once listening; exits when its stdin closes (its parent went away).
 */
import { setDurability } from '@creek/server/node';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import WebSocket, { WebSocketServer } from 'ws';
import { flagPairs } from './cli-flags.js';

const USAGE = 'node --import tsx bench/src/floor-server.ts --dir DIR [--upstream ws://HOST:PORT]';
const fail = (message: string): never => {
  console.error(`floor-server: ${message}`);
  process.exit(2);
};
const flags: { dir?: string; upstream?: string } = {};
for (const [name, raw] of flagPairs(
  process.argv.slice(2),
  USAGE,
  (n) => n === 'dir' || n === 'upstream',
  fail,
))
  flags[name as 'dir' | 'upstream'] = raw;
const dir = flags.dir ?? fail(`--dir DIR is required\n\n${USAGE}`);
const upstreamUrl = flags.upstream;

const db = new Database(join(dir, upstreamUrl === undefined ? 'floor.db' : 'relay.db'));
db.pragma('locking_mode = EXCLUSIVE');
setDurability(db, false);
db.exec('CREATE TABLE IF NOT EXISTS log (seq INTEGER PRIMARY KEY, body TEXT NOT NULL)');
const insert = db.prepare('INSERT INTO log (body) VALUES (?)');

interface Frame {
  opId?: string;
}

/** Parse and make durable; returns the frame and its row number. */
function receive(data: WebSocket.RawData): { frame: Frame; seq: number } {
  const text = (data as Buffer).toString();
  const frame = JSON.parse(text) as Frame;
  return { frame, seq: Number(insert.run(text).lastInsertRowid) };
}

/** A frame shaped like a tentative view (the client parses it like one). */
function view(frame: Frame, n: number): string {
  return JSON.stringify({
    t: 'view',
    opId: frame.opId,
    level: 'tentative',
    outcome: { ok: true, value: n },
    id: { replica: 0, eventNo: n },
  });
}

/** Relay mode: ops forwarded upstream, answered when the upstream answers. */
const waiting = new Map<string, (reply: Frame, seq: number) => void>();
let upstream: WebSocket | null = null;
if (upstreamUrl !== undefined) {
  upstream = new WebSocket(upstreamUrl, { perMessageDeflate: false });
  upstream.on('message', (data) => {
    const { frame, seq } = receive(data);
    const k = frame.opId ?? '';
    const done = waiting.get(k);
    waiting.delete(k);
    done?.(frame, seq);
  });
  upstream.on('error', (err) => {
    console.error(`floor-server: upstream ${upstreamUrl}: ${err.message}`);
    process.exit(1);
  });
}

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
wss.on('connection', (ws) => {
  ws.on('message', (data) => {
    const { frame, seq } = receive(data);
    if (upstream === null) {
      ws.send(view(frame, seq));
      return;
    }
    // Answered once the upstream answered and its answer, too, is durable here.
    waiting.set(frame.opId ?? '', (reply, n) => ws.send(view(reply, n)));
    upstream.send(JSON.stringify(frame));
  });
});

const ready = (): void => {
  const address = wss.address();
  if (typeof address === 'object' && address !== null) console.log(`port ${address.port}`);
};
wss.on('listening', () => {
  if (upstream === null || upstream.readyState === WebSocket.OPEN) ready();
  else upstream.once('open', ready);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
