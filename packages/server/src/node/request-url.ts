/**
 * The URL of an HTTP request whose target is a path (origin-form, RFC 9112 §3.2.1), or null for
 * any other target. `new URL(target, base)` reads a target starting with `//` as a host and
 * throws on `GET //`; thrown from the request handler, that ended the replica's process.
 */
export function requestUrl(target: string | undefined): URL | null {
  if (target === undefined || !target.startsWith('/')) return null;
  try {
    return new URL(`http://localhost${target}`);
  } catch {
    return null;
  }
}
