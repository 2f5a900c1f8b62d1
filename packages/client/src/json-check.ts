/**
 * Is a value one the wire carries unchanged? Operation arguments travel as JSON text
 * (protocol codec.ts), and JSON.stringify quietly changes what it cannot represent: NaN becomes
 * null, a Date a string, a Map `{}`; it throws on BigInt and cycles, and a replica refuses a frame
 * nested deeper than MAX_NESTING or larger than MAX_FRAME_BYTES. This check runs before anything
 * is sent and names the path of the first offending part, so the caller can fix it.
 *
 * Iterative, so no nesting exhausts the stack, and it stops once the JSON text would pass
 * `maxBytes`, so its work is bounded by the limit, not by the value (a value that shares one array
 * many times over is as large as its text, not its heap).
 */

export interface JsonLimits {
  /** Most arrays and objects nested in one another, the root one included. */
  readonly maxNesting: number;
  /** Most UTF-8 bytes of the value's JSON text. */
  readonly maxBytes: number;
}

export type JsonCheck =
  | { readonly ok: true }
  | {
      readonly ok: false;
      /** The offending part, from the root's name: `args.items[3].when`. */
      readonly path: string;
      /** What is wrong with it, and what to pass instead. */
      readonly problem: string;
    };

/** A step of a path, linked to its parent, so that a path is written out only for a problem. */
interface PathNode {
  readonly parent: PathNode | null;
  readonly key: string | number;
}

type Task =
  | { readonly value: unknown; readonly at: PathNode; readonly depth: number }
  | { readonly leave: object };

/** `value` is JSON within `limits`, or the path and problem of its first offending part. */
export function checkJson(value: unknown, rootName: string, limits: JsonLimits): JsonCheck {
  /** Containers enclosing the value being looked at, with their paths: a cycle returns to one. */
  const enclosing = new Map<object, PathNode>();
  const stack: Task[] = [{ value, at: { parent: null, key: rootName }, depth: 0 }];
  let bytes = 0;
  const refuse = (at: PathNode, problem: string): JsonCheck => ({
    ok: false,
    path: pathText(at),
    problem,
  });
  while (stack.length > 0) {
    const task = stack.pop()!;
    if ('leave' in task) {
      enclosing.delete(task.leave);
      continue;
    }
    const { value: v, at, depth } = task;
    const kind = notJson(v);
    if (kind !== null) return refuse(at, kind);
    if (typeof v !== 'object' || v === null) {
      bytes += scalarBytes(v as string | number | boolean | null, limits.maxBytes - bytes);
      if (bytes > limits.maxBytes) return refuse(at, tooLarge(limits.maxBytes));
      continue;
    }
    const seenAt = enclosing.get(v);
    if (seenAt !== undefined)
      return refuse(
        at,
        `a cycle: this is ${pathText(seenAt)} again, inside itself; JSON cannot represent it`,
      );
    if (depth + 1 > limits.maxNesting)
      return refuse(
        at,
        `nested deeper than ${limits.maxNesting} arrays and objects, the most a replica accepts; flatten the value`,
      );
    enclosing.set(v, at);
    stack.push({ leave: v });
    const children: Task[] = [];
    if (Array.isArray(v)) {
      bytes += 2 + Math.max(0, v.length - 1); // brackets and commas
      for (let i = 0; i < v.length; i++) {
        const child: PathNode = { parent: at, key: i };
        if (!(i in v))
          return refuse(
            child,
            'an empty slot of a sparse array is not a JSON value (JSON would send null); fill it',
          );
        if (v[i] === undefined)
          return refuse(
            child,
            'undefined in an array is not a JSON value (JSON would send null); pass null',
          );
        children.push({ value: v[i], at: child, depth: depth + 1 });
      }
    } else {
      const symbol = Object.getOwnPropertySymbols(v).find((s) =>
        Object.prototype.propertyIsEnumerable.call(v, s),
      );
      if (symbol !== undefined)
        return refuse(
          at,
          `the symbol key ${String(symbol)} is not JSON (JSON would drop it); use a string key`,
        );
      let fields = 0;
      for (const key of Object.keys(v)) {
        const child: PathNode = { parent: at, key };
        if (key === '__proto__')
          return refuse(
            child,
            'a "__proto__" key is refused by the replicas (it could change what an object inherits); rename it',
          );
        const field = (v as Record<string, unknown>)[key];
        // Left out, as JSON.stringify does: how TypeScript writes an optional field that is absent.
        if (field === undefined) continue;
        bytes += stringBytes(key, limits.maxBytes - bytes) + 1; // the key and its colon
        fields++;
        children.push({ value: field, at: child, depth: depth + 1 });
      }
      bytes += 2 + Math.max(0, fields - 1); // braces and commas
    }
    if (bytes > limits.maxBytes) return refuse(at, tooLarge(limits.maxBytes));
    // Reversed, so that the first offending part in the text is the one reported.
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return { ok: true };
}

/** Why `v` is not a JSON value (arrays and plain objects pass, their contents looked at later). */
function notJson(v: unknown): string | null {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return null;
    case 'number':
      return Number.isFinite(v)
        ? null
        : `${v} is not a JSON number (JSON would send null); pass a finite number, or null`;
    case 'bigint':
      return `a BigInt (${v}n) is not a JSON value; pass it as a string (String(n)), or as a number if it is within ±2^53`;
    case 'undefined':
      return 'undefined is not a JSON value; pass null for "nothing"';
    case 'function':
      return 'a function is not a JSON value; pass data only';
    case 'symbol':
      return 'a symbol is not a JSON value; pass a string';
    case 'object': {
      if (v === null || Array.isArray(v)) return null;
      const proto = Object.getPrototypeOf(v) as unknown;
      return proto === Object.prototype || proto === null ? null : notPlain(v);
    }
  }
}

/** What to say about an object that is not a plain one: what JSON would make of it, what to pass. */
function notPlain(v: object): string {
  if (v instanceof Date) return 'a Date is not a JSON value; pass date.toISOString()';
  if (v instanceof Map)
    return 'a Map is not a JSON value (JSON would send {}); pass Object.fromEntries(map) or [...map]';
  if (v instanceof Set) return 'a Set is not a JSON value (JSON would send {}); pass [...set]';
  if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer)
    return `a ${v.constructor.name} is not a JSON value; pass an array of numbers or a base64 string`;
  if (v instanceof RegExp) return 'a RegExp is not a JSON value; pass regexp.source';
  if (v instanceof Error) return 'an Error is not a JSON value; pass error.message';
  if (v instanceof String || v instanceof Number || v instanceof Boolean)
    return `a ${v.constructor.name} object is not a JSON value; pass the primitive (value.valueOf())`;
  if (typeof (v as { then?: unknown }).then === 'function')
    return 'a Promise is not a JSON value; await it first';
  const name = (v as { constructor?: { name?: unknown } }).constructor?.name;
  const what = typeof name === 'string' && name !== '' ? `an instance of ${name}` : 'this object';
  return `${what} is not a JSON value (only plain objects and arrays are); pass a plain object with the fields you mean`;
}

function tooLarge(maxBytes: number): string {
  return `the arguments' JSON text passes ${maxBytes} bytes here, the most one call may carry (the protocol's frame limit); send large data in parts, or keep it elsewhere`;
}

/** The bytes of a string, number, boolean or null in JSON text; more than `room` means too many. */
function scalarBytes(v: string | number | boolean | null, room: number): number {
  if (typeof v === 'string') return stringBytes(v, room);
  return String(v).length; // JSON writes finite numbers as String does; true, false, null as such
}

/**
 * The UTF-8 bytes of a string as JSON.stringify writes it: quoted, with `"`, `\` and control
 * characters escaped, and lone surrogates as `\uXXXX` (ES2019 well-formed JSON.stringify). Stops
 * counting past `room`.
 */
function stringBytes(s: string, room: number): number {
  if (s.length + 2 > room) return s.length + 2; // at least a byte a code unit: too many already
  let n = 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22 || c === 0x5c)
      n += 2; // \" and \\
    else if (c < 0x20)
      n += c >= 0x08 && c <= 0x0d && c !== 0x0b ? 2 : 6; // \b \t \n \f \r, else \u00XX
    else if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        n += 4;
        i++;
      } else n += 6;
    } else if (c >= 0xdc00 && c <= 0xdfff) n += 6;
    else n += 3;
  }
  return n;
}

/** `args.items[3].when`; a key that is not an identifier is quoted: `args["a b"]`. */
function pathText(at: PathNode): string {
  const parts: string[] = [];
  for (let p: PathNode | null = at; p !== null; p = p.parent) {
    if (p.parent === null) parts.push(String(p.key));
    else if (typeof p.key === 'number') parts.push(`[${p.key}]`);
    else if (/^[A-Za-z_$][\w$]*$/.test(p.key)) parts.push(`.${p.key}`);
    else parts.push(`[${JSON.stringify(p.key)}]`);
  }
  return parts.reverse().join('');
}
