import type { App } from './app.js';
import type { User } from './user.js';

/** Why a caller may not invoke an op: not signed in, or signed in as a user the op refuses. */
export interface AccessDenied {
  readonly code: 'unauthorized' | 'forbidden';
  readonly message: string;
}

/** What a refusal tells the caller about the op itself: it was refused before it was ordered. */
const NOT_APPLIED = 'the op was not applied';

/**
 * Whether `user` (null: anonymous) may call op `name` of `app`, in a cluster that verifies user
 * tokens: null when it may, else why not. Deny by default: an op that says nothing needs a
 * signed-in user. An access check that throws refuses, with its message. An op the app does not
 * have passes: the replica refuses it as unknown, with the list of ops.
 *
 * Runs at the replica the client is connected to, before the op is ordered, and only there: the
 * other replicas execute what that one let through, with the same user.
 */
export function checkAccess(
  app: App,
  name: string,
  user: User | null,
  /** The op's arguments: a shared context's built-in is checked for the context it names. */
  args?: unknown,
): AccessDenied | null {
  const access = app.accessOf(name);
  if (access === undefined || access.kind === 'public') return null;
  if (access.kind === 'closed')
    return {
      code: user === null ? 'unauthorized' : 'forbidden',
      message: `'${name}' is not open to end users: this app keeps the built-in kv.* and queue.* ops to itself (defineApp(ops, { builtins: 'signed-in' }) opens them); ${NOT_APPLIED}`,
    };
  if (user === null)
    return {
      code: 'unauthorized',
      message: `'${name}' needs a signed-in user: connect with the user's token (connect({ auth })); ${NOT_APPLIED}`,
    };
  if (access.kind === 'signed-in') return null;
  if (access.kind === 'context') return checkContext(name, access.check, user, args);
  return judged(name, user, '', () => access.check(user));
}

/**
 * A shared context's built-in: the app's check for the context `args` names. Arguments that name
 * none are refused (they would be refused as invalid anyway): a caller that passes no arguments
 * must not let every context through.
 */
function checkContext(
  name: string,
  check: (user: User, id: string) => boolean,
  user: User,
  args: unknown,
): AccessDenied | null {
  const id: unknown =
    typeof args === 'object' && args !== null ? (args as { id?: unknown }).id : undefined;
  if (typeof id !== 'string')
    return {
      code: 'forbidden',
      message: `'${name}' names no context (its arguments have no string id), so no user may call it so; ${NOT_APPLIED}`,
    };
  return judged(name, user, ` in context '${id.slice(0, 128)}'`, () => check(user, id));
}

/** What an access check said of `user` (true lets the call through; false or a throw refuses). */
function judged(
  name: string,
  user: User,
  where: string,
  check: () => unknown,
): AccessDenied | null {
  let allowed: unknown;
  try {
    allowed = check();
  } catch (err) {
    return {
      code: 'forbidden',
      message: `'${name}' refused user '${user.id}'${where}: its access check threw (${err instanceof Error ? err.message : String(err)}); ${NOT_APPLIED}`,
    };
  }
  if (allowed === true) return null;
  return {
    code: 'forbidden',
    message: `'${name}' is not allowed for user '${user.id}'${where} (its access check said no); ${NOT_APPLIED}`,
  };
}
