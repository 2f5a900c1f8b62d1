import { useSyncExternalStore } from 'react';
import { z } from 'zod';

/**
 * Signing in on an example page, with the dev identity provider the page server mounts
 * (`GET /dev/sign-in?user=NAME`, same origin): a "sign in as" picker and, per signed-in client, a
 * token source for `connect({ auth })`, asked at every connection and whenever a replica wants a
 * fresh token. A real app would ask its identity provider's SDK instead.
 */

/** What the page server answers; checked, as everything that crosses into the page. */
const SignedInSchema = z.object({
  user: z.string(),
  token: z.string().min(1),
  expiresAt: z.number(),
});
const RefusedSchema = z.object({ error: z.string() });

export type SignInState =
  | { readonly state: 'signing-in' }
  | { readonly state: 'signed-in'; readonly expiresAt: number }
  | { readonly state: 'failed'; readonly error: string };

/** One user's sign-in on this page: the token source for its client, and how it went. */
export class DevSession {
  private current: SignInState = { state: 'signing-in' };
  private readonly listeners = new Set<() => void>();

  constructor(readonly user: string) {}

  /** A fresh token for `user` from the page server (`auth` of the client). */
  readonly token = async (): Promise<string> => {
    try {
      const res = await fetch(`/dev/sign-in?user=${encodeURIComponent(this.user)}`, {
        cache: 'no-store',
      });
      const body: unknown = await res.json();
      if (!res.ok) {
        const refused = RefusedSchema.safeParse(body);
        throw new Error(
          refused.success ? refused.data.error : `the sign-in answered ${res.status}`,
        );
      }
      const signed = SignedInSchema.parse(body);
      this.set({ state: 'signed-in', expiresAt: signed.expiresAt });
      return signed.token;
    } catch (err) {
      this.set({ state: 'failed', error: err instanceof Error ? err.message : String(err) });
      throw err;
    }
  };

  get = (): SignInState => this.current;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  };

  private set(next: SignInState): void {
    this.current = next;
    for (const l of [...this.listeners]) l();
  }
}

/**
 * Who is signed in, with a picker to sign in as someone else. `data-user` is the user whose token
 * the page holds (empty until it has one), `data-state` how the sign-in went.
 */
export function SignInPicker(p: {
  readonly users: readonly string[];
  readonly session: DevSession;
  onPick(user: string): void;
}) {
  const s = useSyncExternalStore(p.session.subscribe, p.session.get);
  return (
    <span
      className="sign-in"
      data-role="sign-in"
      data-state={s.state}
      data-user={s.state === 'signed-in' ? p.session.user : ''}
    >
      <label>
        {s.state === 'signed-in' ? 'Signed in as' : 'Sign in as'}{' '}
        <select value={p.session.user} onChange={(e) => p.onPick(e.target.value)}>
          {p.users.map((u) => (
            <option key={u} value={u}>
              {u}
            </option>
          ))}
        </select>
      </label>
      {s.state === 'signing-in' && <span className="tag">signing in…</span>}
      {s.state === 'failed' && <span className="error"> Cannot sign in: {s.error}</span>}
    </span>
  );
}
