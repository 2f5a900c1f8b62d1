import type { App, JsonValue, Tx, User } from '@creek/app';

/**
 * A serial store: what each op's `run` sees when ops execute one after another. `user` is the
 * caller of the next op (null: anonymous), as the replica carries it with the op.
 */
export class MapTx implements Tx {
  readonly data = new Map<string, JsonValue>();
  user: User | null = null;
  get = (k: string): JsonValue | undefined => this.data.get(k);
  put = (k: string, v: JsonValue): void => void this.data.set(k, v);
  delete = (k: string): void => void this.data.delete(k);
  scan = (prefix: string): [string, JsonValue][] =>
    [...this.data].filter(([k]) => k.startsWith(prefix)).sort(([a], [b]) => (a < b ? -1 : 1));
  now = (): number => 0;
  random = (): number => 0;

  /** Makes the following ops `user`'s (null: anonymous); returns this, for chaining. */
  as(user: User | null): this {
    this.user = user;
    return this;
  }
}

/** Runs an op of `app` serially, checking its arguments first like a replica does. */
export function runOp(app: App, tx: Tx, name: string, args: unknown): unknown {
  const def = app.lookup(name);
  if (def === undefined) throw new Error(`no op '${name}'`);
  return def.run(tx, def.args.parse(args));
}

/** A user as a verified token makes it; the dev identity's `admin` has `{ role: 'admin' }`. */
export const user = (id: string, claims: Record<string, JsonValue> = {}): User => ({
  id,
  claims: { sub: id, ...claims },
});
