import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRetryAfter, retryAfterHeaderSeconds } from '../../../src/util/retry-after.js';

const now = Date.parse('2026-10-21T07:27:30Z');

test('seconds, whole or fractional, become milliseconds', () => {
  assert.equal(parseRetryAfter('7', now), 7_000);
  assert.equal(parseRetryAfter(' 1.5 ', now), 1_500);
  assert.equal(parseRetryAfter(['3', '9'], now), 3_000);
});

test('an HTTP date is read relative to now, and a past one is zero', () => {
  assert.equal(parseRetryAfter('Wed, 21 Oct 2026 07:28:00 GMT', now), 30_000);
  assert.equal(parseRetryAfter('Wed, 21 Oct 2026 07:00:00 GMT', now), 0);
});

test('an HTTP date without a clock is ignored', () => {
  assert.equal(parseRetryAfter('Wed, 21 Oct 2026 07:28:00 GMT', undefined), undefined);
  assert.equal(parseRetryAfter('4', undefined), 4_000);
});

test('absent, empty, negative or malformed values say nothing, never zero', () => {
  for (const value of [undefined, '', '  ', '-1', 'soon', '1e3', []]) {
    assert.equal(parseRetryAfter(value, now), undefined, JSON.stringify(value));
  }
});

test('in seconds a wait is rounded up, never shortened', () => {
  assert.equal(retryAfterHeaderSeconds('1.2', now), 2);
  assert.equal(retryAfterHeaderSeconds('Wed, 21 Oct 2026 07:27:31 GMT', now + 1), 1);
  assert.equal(retryAfterHeaderSeconds('nope', now), undefined);
});
