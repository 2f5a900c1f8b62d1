/**
 * Packs encoded peer messages into WebSocket frames that each respect the protocol's frame limit.
 * A turn's messages to one peer go as one `batch` frame (one write, one parse), but after a heal
 * a turn could hold megabytes of them, and a receiver drops any frame over MAX_FRAME_BYTES
 * unread: everything in it was lost and sent again, to be lost again. So a batch closes before it
 * would cross the limit, and a message that is over the limit by itself is left out (the layer
 * that built it must page it; the caller counts it) rather than sent to be dropped.
 */

export interface PackedFrames {
  /** Frame texts, in the order of the messages they hold. */
  readonly frames: string[];
  /** Messages left out because each alone is larger than the limit. */
  readonly oversized: number;
}

const OPEN = '{"t":"batch","frames":[';
const CLOSE = ']}';

/** `parts` are encoded messages; each frame is at most `limit` bytes. */
export function packFrames(parts: readonly string[], limit: number): PackedFrames {
  const frames: string[] = [];
  let oversized = 0;
  let group: string[] = [];
  let groupBytes = 0;
  const close = (): void => {
    if (group.length === 1) frames.push(group[0]!);
    else if (group.length > 1) frames.push(`${OPEN}${group.join(',')}${CLOSE}`);
    group = [];
    groupBytes = 0;
  };
  for (const part of parts) {
    // A character takes at most 3 bytes; measuring costs a pass over the text, so only near the
    // limit (a batch therefore closes early, at a third of it, when its text is short).
    const bytes = part.length * 3 <= limit ? part.length * 3 : Buffer.byteLength(part);
    if (bytes > limit) {
      oversized++;
      continue;
    }
    // The batch's envelope and a comma per message.
    if (group.length > 0 && groupBytes + bytes + 1 + OPEN.length + CLOSE.length > limit) close();
    group.push(part);
    groupBytes += bytes + (group.length > 1 ? 1 : 0);
  }
  close();
  return { frames, oversized };
}
