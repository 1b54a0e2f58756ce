import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiErrorFromResponse, type ApiError } from '../../src/errors/api-error.js';
import {
  isExpired,
  isRetryable,
  isForbidden,
  isRetryableSmtpError,
  retryAfterSeconds,
  errorKind,
  watchFailure,
  type WatchFailure,
} from '../../src/errors/classify.js';
import { TransportError, DecodeError, AuthError } from '../../src/errors/raven-error.js';

test('a Status body is kept as the error status with its reason and message', () => {
  const body = JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    message: 'too old resource version: 1 (2)',
    reason: 'Expired',
    code: 410,
  });
  const err = apiErrorFromResponse(410, body, { method: 'GET', path: '/api/v1/pods?watch=1' });
  assert.equal(err.statusCode, 410);
  assert.equal(err.reason, 'Expired');
  assert.match(err.message, /410 Expired: too old resource version.*GET \/api\/v1\/pods/);
  assert.equal(isExpired(err), true);
  assert.equal(isRetryable(err), false);
});

test('a non-Status body is turned into a synthesised Status naming the HTTP code', () => {
  const err = apiErrorFromResponse(503, '<html>upstream down</html>');
  assert.equal(err.status.reason, 'ServiceUnavailable');
  assert.equal(err.status.code, 503);
  assert.equal(isRetryable(err), true);
  assert.equal(errorKind(err), 'api:503');
});

test('Retry-After header becomes retryAfterSeconds unless the Status already carries one', () => {
  const err = apiErrorFromResponse(429, 'slow down', undefined, '7');
  assert.equal(retryAfterSeconds(err), 7);
  assert.equal(isRetryable(err), true);
  const withDetails = apiErrorFromResponse(
    429,
    JSON.stringify({
      kind: 'Status',
      code: 429,
      reason: 'TooManyRequests',
      details: { retryAfterSeconds: 2 },
    }),
    undefined,
    '9',
  );
  assert.equal(retryAfterSeconds(withDetails), 2);
});

test('403 is not retryable as such but is recognised as forbidden', () => {
  const err = apiErrorFromResponse(403, JSON.stringify({ kind: 'Status', code: 403, reason: 'Forbidden' }));
  assert.equal(isForbidden(err), true);
  assert.equal(isRetryable(err), false);
});

test('transport failures are retryable and decode failures are not', () => {
  assert.equal(isRetryable(new TransportError('reset')), true);
  assert.equal(isRetryable(new DecodeError('bad json')), false);
  assert.equal(errorKind(new DecodeError('bad json')), 'decode');
  assert.equal(isExpired(new Error('410')), false);
});

test('a watch failure is transient, invalid, unauthorized, forbidden or not-found by what retrying can do', () => {
  const api = (code: number, reason?: string): ApiError =>
    apiErrorFromResponse(code, JSON.stringify({ kind: 'Status', code, ...(reason ? { reason } : {}) }));
  const cases: [unknown, WatchFailure][] = [
    [new TransportError('connect ECONNREFUSED'), 'transient'],
    [new DecodeError('truncated frame'), 'transient'],
    [api(500), 'transient'],
    [api(503), 'transient'],
    [api(429), 'transient'],
    [api(410, 'Expired'), 'transient'],
    [api(408), 'transient'],
    [api(400, 'BadRequest'), 'invalid'],
    [api(422, 'Invalid'), 'invalid'],
    [api(405, 'MethodNotAllowed'), 'invalid'],
    [api(401, 'Unauthorized'), 'unauthorized'],
    [new AuthError('exec plugin not found'), 'unauthorized'],
    [api(403, 'Forbidden'), 'forbidden'],
    [api(404, 'NotFound'), 'not-found'],
    [new Error('something else'), 'transient'],
  ];
  for (const [err, expected] of cases)
    assert.equal(watchFailure(err), expected, err instanceof Error ? err.message : String(err));
});

test('SMTP failures: 4xx answers and lost connections are retried; 5xx, credentials and certificates are not', () => {
  // The shapes nodemailer gives its errors (code, originalCode, responseCode).
  const smtp = (fields: object): Error => Object.assign(new Error('smtp'), fields);
  const cases: [string, Error, boolean][] = [
    ['421 service not available', smtp({ code: 'EENVELOPE', responseCode: 421 }), true],
    ['451 try again later', smtp({ code: 'EMESSAGE', responseCode: 451 }), true],
    ['454 temporary authentication failure', smtp({ code: 'EAUTH', responseCode: 454 }), true],
    ['connection refused', smtp({ code: 'ESOCKET', originalCode: 'ECONNREFUSED' }), true],
    ['connection dropped', smtp({ code: 'ECONNECTION' }), true],
    ['timeout', smtp({ code: 'ETIMEDOUT' }), true],
    ['550 mailbox unavailable', smtp({ code: 'EENVELOPE', responseCode: 550 }), false],
    ['535 bad credentials', smtp({ code: 'EAUTH', responseCode: 535 }), false],
    ['no credentials', smtp({ code: 'ENOAUTH' }), false],
    ['STARTTLS refused', smtp({ code: 'ETLS', responseCode: 503 }), false],
    [
      'untrusted certificate',
      smtp({ code: 'ESOCKET', originalCode: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' }),
      false,
    ],
  ];
  for (const [what, err, retryable] of cases) assert.equal(isRetryableSmtpError(err), retryable, what);
});
