/** Money is integer cents throughout the bank; these turn it into text and back. */

/** 123456 → "$1,234.56"; -5 → "−$0.05". */
export function formatCents(cents: number): string {
  const sign = cents < 0 ? '−' : '';
  const abs = Math.abs(cents);
  const dollars = Math.floor(abs / 100).toLocaleString('en-US');
  return `${sign}$${dollars}.${String(abs % 100).padStart(2, '0')}`;
}

/**
 * "12", "12.5", "12.50", "$1,234.56" → cents; null for anything else (negative, more than two
 * decimals, not a number). What a user types into the page.
 */
export function parseDollars(text: string): number | null {
  const m = /^\s*\$?\s*(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?\s*$/.exec(text);
  if (m === null) return null;
  const whole = Number(m[1]!.replace(/,/g, ''));
  const cents = whole * 100 + Number((m[2] ?? '0').padEnd(2, '0'));
  return Number.isSafeInteger(cents) ? cents : null;
}

/** Interest on a balance at `rateBps` basis points (1 % = 100), rounded down to whole cents. */
export function interestOn(balanceCents: number, rateBps: number): number {
  if (balanceCents <= 0) return 0;
  return Math.floor((balanceCents * rateBps) / 10_000);
}
