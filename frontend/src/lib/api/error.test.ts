import { describe, expect, it } from 'vitest';
import { ApiError, codeForStatus, toApiError } from './error';

describe('toApiError', () => {
  const body = { code: 'invalid_input', message: 'choose a folder to add', next: 'Correct the input and try again.', retryable: false };
  const cases: { name: string; in: unknown; code: string; message: string; next: string }[] = [
    { name: 'object (Wails ErrorFormatter)', in: body, code: 'invalid_input', message: body.message, next: body.next },
    { name: 'JSON text', in: JSON.stringify(body), code: 'invalid_input', message: body.message, next: body.next },
    { name: 'Error with JSON message', in: new Error(JSON.stringify(body)), code: 'invalid_input', message: body.message, next: body.next },
    { name: 'Go ErrorBody.Error() text', in: 'not_found: no such item', code: 'not_found', message: 'no such item', next: '' },
    { name: 'plain text', in: 'boom', code: 'internal_error', message: 'boom', next: '' },
    { name: 'broken JSON', in: '{"code":', code: 'internal_error', message: '{"code":', next: '' },
    { name: 'number', in: 42, code: 'internal_error', message: '42', next: '' },
    // Never "[object Object]" (issue 21).
    { name: 'object with a JSON message', in: { message: JSON.stringify(body) }, code: 'invalid_input', message: body.message, next: body.next },
    { name: 'object without a code', in: { reason: 'x' }, code: 'internal_error', message: '{"reason":"x"}', next: '' },
    { name: 'empty object', in: {}, code: 'internal_error', message: 'an internal error occurred', next: '' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const err = toApiError(c.in);
      expect(err).toBeInstanceOf(ApiError);
      expect({ code: err.code, message: err.message, next: err.next }).toEqual({ code: c.code, message: c.message, next: c.next });
    });
  }

  it('returns an ApiError unchanged', () => {
    const e = new ApiError({ code: 'conflict' }, 409);
    expect(toApiError(e)).toBe(e);
  });
});

describe('codeForStatus', () => {
  it.each([
    [400, 'invalid_input'],
    [401, 'unauthorized'],
    [403, 'permission_denied'],
    [404, 'not_found'],
    [409, 'conflict'],
    [418, 'bad_response'],
    [502, 'internal_error'],
  ])('%i → %s', (status, code) => {
    expect(codeForStatus(status)).toBe(code);
  });
});
