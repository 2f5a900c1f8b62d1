import { z } from 'zod';

/*
 * The page's side of the dev identity provider that the visualizer server serves in --dev mode
 * (devSignInHandler of @creek/server/node): the "sign in as" picker's names, and a token for one.
 * Its answers are checked like any input from outside the page.
 */

const Users = z.object({ users: z.array(z.string()) });
const SignedIn = z.object({ user: z.string(), token: z.string().min(1), expiresAt: z.number() });
const Refused = z.object({ error: z.string() });

/** The dev users the picker offers (alice, bob, admin by default). */
export async function devUsers(): Promise<string[]> {
  const r = await fetch('/dev/users');
  const parsed = Users.safeParse(await r.json().catch(() => null));
  if (!r.ok || !parsed.success) throw new Error(`/dev/users answered ${r.status}`);
  return parsed.data.users;
}

/** A fresh token for dev user `user`; throws with the server's reason if it refuses. */
export async function signInAs(user: string): Promise<string> {
  const r = await fetch(`/dev/sign-in?user=${encodeURIComponent(user)}`);
  const body: unknown = await r.json().catch(() => null);
  const ok = SignedIn.safeParse(body);
  if (r.ok && ok.success) return ok.data.token;
  const refused = Refused.safeParse(body);
  throw new Error(
    `signing in as ${user} failed: ${refused.success ? refused.data.error : `HTTP ${r.status}`}`,
  );
}
