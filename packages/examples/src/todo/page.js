/**
 * The todo page: a plain ES module the browser loads as it is (no bundler). `@creek/client`
 * resolves through index.html's import map to the SDK's browser bundle.
 *
 * Sign in as a dev user (the example's server hands out tokens: GET /dev/sign-in?user=NAME), then
 * the page watches `todo.list` (a live query) and adds, toggles and removes todos with weak ops.
 * Each write says how it changes the list (`optimistic`), so its row shows at once, marked
 * pending, also while no server answers (the op then waits in the offline queue). The row the
 * servers hold replaces it once a result of the query holds the op.
 *
 * A row is `pending` (only this page has it), `tentative` (a server has it) or `stable` (the
 * servers agreed on it: it is in the query's latest stable result). The page mirrors these in data
 * attributes for its tests.
 */
import { connect } from '@creek/client';

/**
 * @typedef {typeof import('./app.js').default} TodoApp
 * @typedef {import('@creek/client').ResultOf<TodoApp, 'todo.list'>[number]} Todo
 * @typedef {import('@creek/client').CreekClient<TodoApp>} Client
 * @typedef {import('@creek/client').LiveQuery<Todo[]>} TodoQuery
 * @typedef {{ urls: string[], token: string, offlineAfterMs: number }} PageConfig
 */

/**
 * What this page's optimistic changes mark on a row, beside the todo: which of its writes are
 * still pending. The servers' rows never have it.
 * @typedef {Todo & { pending?: 'add' | 'toggle' | 'remove' }} Row
 */

/** @param {string} selector */
const $ = (selector) => /** @type {HTMLElement} */ (document.querySelector(selector));

/** @type {PageConfig} */
const config = await (await fetch('/config.json')).json();

/**
 * The signed-in user's client and live query, or null before anyone signs in.
 * @type {{ user: string, client: Client, query: TodoQuery } | null}
 */
let session = null;

/** @param {string} message */
function notice(message) {
  $('#notice').textContent = message;
}

/**
 * A function that returns a valid token for `user`, as an identity provider's SDK does: the
 * client calls it at every connection and when the server asks for a fresh one.
 * @param {string} user
 * @returns {() => Promise<string>}
 */
function tokens(user) {
  /** @type {{ token: string, expiresAt: number } | null} */
  let held = null;
  return async () => {
    if (held === null || held.expiresAt - Date.now() < 60_000) {
      const r = await fetch(`/dev/sign-in?user=${encodeURIComponent(user)}`);
      const body = await r.json();
      if (!r.ok) throw new Error(`sign-in as ${user} failed: ${body.error ?? r.status}`);
      held = body;
    }
    return /** @type {{ token: string }} */ (held).token;
  };
}

/** @param {string} user */
async function signIn(user) {
  const token = tokens(user);
  try {
    await token();
  } catch (err) {
    notice(String(err instanceof Error ? err.message : err));
    return;
  }
  // A client belongs to one user: signing in as someone else means a new client.
  session?.query.close();
  session?.client.close();
  /** @type {Client} */
  const client = connect({
    urls: config.urls,
    token: config.token,
    auth: token,
    // While no server answers, writes wait in a queue and go out, each once, when one does.
    offline: true,
    connectTimeoutMs: config.offlineAfterMs,
  });
  const query = client.watch('todo.list', {});
  session = { user, client, query };
  $('#list').dataset.loaded = 'no';
  notice('');
  document.body.dataset.user = user;
  for (const b of document.querySelectorAll('#users button'))
    b.setAttribute('aria-pressed', String(b.textContent === user));
  $('#who').textContent = `Signed in as ${user}.`;
  $('#list').hidden = false;
  client.onStatus(() => render());
  query.subscribe({
    onView: () => render(),
    onStable: () => render(),
    onCorrection: (c) =>
      notice(`Not saved: ${c.failed.map((f) => f.error ?? 'it failed').join('; ')}`),
    onError: (e) => notice(`The list stopped: ${e.message}`),
  });
  render();
}

const STATUS = {
  connecting: 'Connecting…',
  connected: 'Connected',
  offline: 'Offline: changes are sent when the connection is back',
  closed: 'Signed out',
};

/** Draws the list from the query's latest view, each row marked with how far it got. */
function render() {
  if (session === null) return;
  const { client, query } = session;
  const status = client.status();
  $('#status').dataset.status = status;
  $('#status').textContent = STATUS[status];
  /** @type {Row[]} */
  const rows = query.latest()?.value ?? [];
  const stable = new Map((query.latestStable()?.value ?? []).map((t) => [t.id, t]));
  const list = $('#todos');
  list.replaceChildren(
    ...rows.map((row) => {
      const synced = stable.get(row.id);
      const state =
        row.pending !== undefined
          ? 'pending'
          : synced !== undefined && synced.done === row.done && synced.text === row.text
            ? 'stable'
            : 'tentative';
      const li = document.createElement('li');
      li.dataset.id = row.id;
      li.dataset.state = state;
      li.dataset.done = row.done ? 'yes' : 'no';
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.checked = row.done;
      box.disabled = row.pending === 'remove';
      box.addEventListener('change', () => toggle(row.id));
      const text = document.createElement('span');
      text.className = 'text';
      text.textContent = row.text;
      const tag = document.createElement('span');
      tag.className = 'tag';
      tag.textContent =
        state !== 'pending'
          ? ''
          : status === 'offline'
            ? 'offline: saved when back online'
            : row.pending === 'remove'
              ? 'removing…'
              : 'saving…';
      const remove = document.createElement('button');
      remove.type = 'button';
      remove.textContent = 'Remove';
      remove.dataset.action = 'remove';
      remove.disabled = row.pending === 'remove';
      remove.addEventListener('click', () => removeTodo(row.id));
      li.append(box, text, tag, remove);
      return li;
    }),
  );
  $('#empty').hidden = rows.length > 0 || query.latest() === undefined;
  $('#list').dataset.loaded = query.latest() === undefined ? 'no' : 'yes';
}

/**
 * A row of `todo` marked pending (a write of this page's that no result of the query holds yet).
 * @param {Todo} todo
 * @param {Row['pending']} pending
 * @returns {Row}
 */
const pendingRow = (todo, pending) => ({ ...todo, pending });

/**
 * Says so when a write fails (a toggle of a todo another device removed, say).
 * @param {PromiseLike<unknown>} call
 */
function report(call) {
  call.then(undefined, (/** @type {Error} */ e) => notice(`Not saved: ${e.message}`));
}

// The writes are weak: one answer, from one server, at once (app.js says why that is safe here).
// Each says how it changes the list, so the page shows it before any server answers.

/** @param {string} text */
function add(text) {
  if (session === null) return;
  const id = crypto.randomUUID();
  const row = pendingRow({ id, text, done: false, at: Date.now() }, 'add');
  report(
    session.client.invokeWeak(
      'todo.add',
      { id, text },
      { optimistic: (views) => views.update('todo.list', {}, (list = []) => [...list, row]) },
    ),
  );
}

/** @param {string} id */
function toggle(id) {
  if (session === null) return;
  /** @param {Todo} t */
  const flip = (t) => (t.id === id ? pendingRow({ ...t, done: !t.done }, 'toggle') : t);
  report(
    session.client.invokeWeak(
      'todo.toggle',
      { id },
      { optimistic: (views) => views.update('todo.list', {}, (list = []) => list.map(flip)) },
    ),
  );
}

/** @param {string} id */
function removeTodo(id) {
  if (session === null) return;
  /** @param {Todo} t */
  const mark = (t) => (t.id === id ? pendingRow(t, 'remove') : t);
  report(
    session.client.invokeWeak(
      'todo.remove',
      { id },
      { optimistic: (views) => views.update('todo.list', {}, (list = []) => list.map(mark)) },
    ),
  );
}

$('#add').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const input = /** @type {HTMLInputElement} */ ($('#add input'));
  const text = input.value.trim();
  if (text === '') return;
  add(text);
  input.value = '';
});

/** @type {{ users: string[] }} */
const { users } = await (await fetch('/dev/users')).json();
$('#users').replaceChildren(
  ...users.map((user) => {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = user;
    b.dataset.user = user;
    b.addEventListener('click', () => void signIn(user));
    return b;
  }),
);
document.body.dataset.ready = 'yes';
