/**
 * A random session id. `randomUUID` exists only in secure contexts (https, localhost), and neither
 * it nor `getRandomValues` in React Native's Hermes without a polyfill.
 */
export function randomId(): string {
  const c = (
    globalThis as {
      crypto?: { randomUUID?: () => string; getRandomValues?: (a: Uint8Array) => Uint8Array };
    }
  ).crypto;
  if (typeof c?.randomUUID === 'function') return c.randomUUID();
  if (typeof c?.getRandomValues === 'function') {
    const bytes = c.getRandomValues(new Uint8Array(16));
    return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  }
  throw new Error(
    'connect: this runtime has no crypto.getRandomValues, which the client needs for its random session id; ' +
      "on React Native, install react-native-get-random-values and import it first in your app's entry file",
  );
}
