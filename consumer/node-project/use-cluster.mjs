// Plain-JavaScript ESM against a running cluster: weak, strong and two-view ops, with plain `node`.
// Reads CREEK_URLS (comma-separated) and CREEK_TOKEN; prints one JSON line; exits non-zero on a
// wrong answer.
import { connect, InvalidArguments } from '@creek/client';
import app from './app.js';

const urls = process.env.CREEK_URLS.split(',');
const creek = connect({ urls, token: process.env.CREEK_TOKEN, app });
const fail = (what) => {
  console.error(`use-cluster: ${what}`);
  process.exit(1);
};

const weak = await creek.invokeWeak('counter.add', { name: 'visits', by: 2 });
const strong = await creek.invokeStrong('counter.add', { name: 'visits', by: 3 });
if (strong !== 5) fail(`strong counter.add gave ${strong}, expected 5 after a weak +2`);

// invoke: a preliminary (tentative) view, then the final (stable) one (Correctables §3). A replica
// that re-executes the op (another replica's op ordered before it) sends the tentative view again.
const views = [];
const final = await creek.invoke('counter.add', { name: 'visits', by: 10 }).setCallbacks({
  onUpdate: (_, view) => views.push(view.level),
  onFinal: (_, view) => views.push(view.level),
});
if (final !== 15) fail(`invoke gave ${final}, expected 15`);
if (!/^(weak,)+strong$/.test(views.join()))
  fail(`invoke's views were ${views.join()}, expected weak (once or more), then strong`);
const stableRead = await creek.invokeStrong('counter.get', { name: 'visits' });
const kv = await creek.invokeStrong('kv.put', { key: 'greeting', value: { hello: 'world' } });
const got = await creek.invokeWeak('kv.get', { key: 'greeting' });

// The app's schema is checked here, before anything is sent.
let refused = null;
try {
  await creek.invokeWeak('counter.add', { name: '', by: 1.5 });
} catch (e) {
  refused = e instanceof InvalidArguments ? e.message : `wrong error: ${e}`;
}
if (refused === null || !refused.includes('invalid arguments')) fail(`bad arguments: ${refused}`);

creek.close();
console.log(JSON.stringify({ weak, strong, final, views, stableRead, kv, got, refused }));
