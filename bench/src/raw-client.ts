/**
 * The wire protocol spoken directly, without the SDK, for benchmarks that must not measure the
 * client: the handshake, and when a frame completes an op.
 */
import WebSocket from 'ws';

/** The fields of a server frame the benchmarks read. */
export interface RawFrame {
  t: string;
  opId?: string;
  level?: string;
  outcome?: { ok: boolean; error?: string };
  code?: string;
  message?: string;
}

/**
 * Opens a connection to `url`. With a token it says hello and resolves at the welcome (an error
 * frame without an op id rejects); without one (an echo or floor server) it resolves once open.
 * Every later frame goes to `onFrame`. The caller handles 'close' and 'error' after the handshake.
 */
export function openRaw(
  url: string,
  token: string | undefined,
  onFrame: (f: RawFrame) => void,
): Promise<WebSocket> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  ws.binaryType = 'nodebuffer';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer from ${url} in 10 s`)), 10_000);
    const settle = (err: Error | null): void => {
      clearTimeout(timer);
      if (err === null) resolve(ws);
      else reject(err);
    };
    ws.once('error', settle);
    ws.once('open', () => {
      if (token === undefined) settle(null);
      else ws.send(JSON.stringify({ t: 'hello', version: 1, token }));
    });
    ws.on('message', (data) => {
      const f = JSON.parse((data as Buffer).toString()) as RawFrame;
      if (f.t === 'welcome') settle(null);
      else if (f.t === 'error' && f.opId === undefined)
        settle(new Error(`${url}: ${f.code ?? 'error'}: ${f.message ?? ''}`));
      else onFrame(f);
    });
  });
}

/**
 * What `f` says of the op it names: null while the op is not done (a strong op's tentative view);
 * otherwise whether it succeeded, and if not, why. A weak op is done at its first view, a strong
 * one at its stable view or its confirm.
 */
export function completion(
  f: RawFrame,
  strong: boolean,
): { ok: true } | { ok: false; error: string } | null {
  if (f.t === 'error') return { ok: false, error: `${f.code ?? 'error'}: ${f.message ?? ''}` };
  if (f.t === 'confirm') return { ok: true };
  if (f.t !== 'view' || (strong && f.level !== 'stable')) return null;
  return f.outcome?.ok === true
    ? { ok: true }
    : { ok: false, error: `op failed: ${f.outcome?.error ?? '?'}` };
}
