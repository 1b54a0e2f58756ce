/**
 * The webhook signature scheme. A receiver that shares the secret verifies a request like this:
 *
 * 1. read `x-raven-timestamp` (Unix seconds) and reject it when it is more than 5 minutes from
 *    the receiver's clock (a replayed request);
 * 2. compute `HMAC-SHA256(secret, `${timestamp}.${rawBody}`)` over the exact bytes received,
 *    hex-encoded;
 * 3. compare it with `x-raven-signature` minus its `sha256=` prefix, in constant time.
 *
 * The timestamp is inside the signed text, so it cannot be changed without breaking the signature.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** `sha256=<hex>` over `${timestamp}.${body}`. */
export function signWebhook(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/**
 * The receiver's check (exported for receivers written in TypeScript and for tests).
 *
 * @example
 * verifyWebhook({ secret, timestamp: req.headers['x-raven-timestamp'], body: raw,
 *   signature: req.headers['x-raven-signature'], nowSeconds: Date.now() / 1000 });
 */
export function verifyWebhook(input: {
  secret: string;
  timestamp: string | undefined;
  body: string;
  signature: string | undefined;
  nowSeconds: number;
  toleranceSeconds?: number;
}): boolean {
  if (input.timestamp === undefined || input.signature === undefined) return false;
  const ts = Number(input.timestamp);
  if (!Number.isInteger(ts) || Math.abs(input.nowSeconds - ts) > (input.toleranceSeconds ?? 300))
    return false;
  const expected = Buffer.from(signWebhook(input.secret, input.timestamp, input.body));
  const given = Buffer.from(input.signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
