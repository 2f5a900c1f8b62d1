/**
 * A plain Node client of the todo app: signs in with a user's token, adds a todo or lists them.
 *
 *   export TODO_USER_TOKEN=$(npm run -s creek -- dev token --user alice)
 *   node packages/examples/src/todo/client.js add "buy milk"
 *   node packages/examples/src/todo/client.js list
 *
 * The user's token comes from your identity provider; with `creek dev`, its dev identity mints
 * one (`creek dev token`). The cluster's client token is read from its data directory.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connect } from '@creek/client';

const USAGE = `usage: node packages/examples/src/todo/client.js [--data DIR] [--urls U1,U2] add TEXT | list
  TODO_USER_TOKEN  the signed-in user's token (npm run -s creek -- dev token --user alice prints one)
  --data DIR        the cluster's data directory, for its client token (default .creek/dev)
  --urls U1,U2      the replicas' client URLs (default ws://127.0.0.1:7100/client and the next two)`;

/**
 * @param {string} message
 * @returns {never}
 */
function fail(message) {
  process.stderr.write(`todo client: ${message}\n\n${USAGE}\n`);
  process.exit(2);
}

/** @type {{ values: { data?: string, urls?: string }, positionals: string[] }} */
let parsed;
try {
  parsed = parseArgs({
    options: { data: { type: 'string' }, urls: { type: 'string' } },
    allowPositionals: true,
  });
} catch (err) {
  fail(err instanceof Error ? err.message : String(err));
}
const [command, ...rest] = parsed.positionals;
if (!((command === 'add' && rest.length === 1) || (command === 'list' && rest.length === 0)))
  fail('say what to do: add TEXT, or list');

const userToken = process.env.TODO_USER_TOKEN?.trim() ?? '';
if (userToken === '')
  fail(
    'no user token: set TODO_USER_TOKEN (npm run -s creek -- dev token --user alice prints one)',
  );

const data = parsed.values.data ?? '.creek/dev';
/** @type {string} */
let token = '';
try {
  token = readFileSync(join(data, 'client.token'), 'utf8').trim(); // made by creek dev
} catch {
  fail(`no client token in ${data}: start the cluster with creek dev (or give --data)`);
}
const urls =
  parsed.values.urls?.split(',') ?? [7100, 7101, 7102].map((p) => `ws://127.0.0.1:${p}/client`);

/** @type {import('@creek/client').CreekClient<typeof import('./app.js').default>} */
const creek = connect({ urls, token, auth: userToken });
try {
  if (command === 'add') {
    const text = /** @type {string} */ (rest[0]);
    const added = creek.invoke('todo.add', { id: randomUUID(), text });
    added.setCallbacks({
      onUpdate: (t) => console.log(`tentative: added "${t.text}"`), // one replica's answer, at once
      onFinal: (t) => console.log(`stable:    added "${t.text}"`), // once the replicas agree
    });
    await added;
  }
  const todos = await creek.invokeStrong('todo.list', {});
  console.log(todos.length === 0 ? 'no todos' : 'todos:');
  for (const t of todos) console.log(`  [${t.done ? 'x' : ' '}] ${t.text}`);
} catch (err) {
  process.stderr.write(`todo client: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
} finally {
  creek.close();
}
