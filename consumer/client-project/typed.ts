// Type-checked with the consumer's strict options (tsconfig.json), never run. Each expected error
// below must fire: tsc fails on an expect-error directive with no error under it.
import { connect, type Correctable, type CreekClient } from '@creek/client';
import type app from './app.js';

export async function use(urls: string[], token: string): Promise<number> {
  const creek: CreekClient<typeof app> = connect<typeof app>({ urls, token });

  const added: number = await creek.invokeStrong('counter.add', { name: 'visits', by: 1 });
  const seen: Correctable<number> = creek.invoke('counter.get', { name: 'visits' });
  const stored = await creek.invokeWeak('kv.get', { key: 'greeting' });
  const live: number | undefined = creek.watch('counter.get', { name: 'visits' }).latest()?.value;
  // Context tokens: a second client (another device, a server render) reads after the first.
  const context: string = await creek.context();
  const other = connect<typeof app>({ urls, token, after: context });
  other.close();
  // @ts-expect-error a context token is a string
  connect<typeof app>({ urls, token, after: 42 });

  // @ts-expect-error an op name the app does not define
  creek.invoke('counter.reset', { name: 'visits' });
  // @ts-expect-error an argument of the wrong type
  creek.invoke('counter.add', { name: 'visits', by: 'one' });
  // @ts-expect-error a required argument left out
  creek.invokeWeak('counter.add', { name: 'visits' });
  // @ts-expect-error counter.add writes: only read-only ops can be watched
  creek.watch('counter.add', { name: 'visits', by: 1 }).close();
  // @ts-expect-error the result is a number, not a string
  const wrong: string = await creek.invokeStrong('counter.get', { name: 'visits' });

  void stored;
  void live;
  void wrong;
  creek.close();
  return added + (await seen);
}
