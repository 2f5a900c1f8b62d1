import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Replicas prove they hold the cluster secret by HMAC challenge–response: the accepting side sends
 * a random nonce, the connecting side answers HMAC-SHA256(secret, nonce:from). The secret never
 * crosses the wire, and a recorded answer is useless for another nonce.
 */
export function newNonce(): string {
  return randomBytes(32).toString('hex');
}

export function answerChallenge(secret: string, nonce: string, from: number): string {
  return createHmac('sha256', secret).update(`${nonce}:${from}`).digest('hex');
}

export function checkAnswer(secret: string, nonce: string, from: number, mac: string): boolean {
  const expected = Buffer.from(answerChallenge(secret, nonce, from), 'hex');
  const given = Buffer.from(mac, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
