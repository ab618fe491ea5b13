// ApiError is the one error type the UI sees, whatever the transport. The Go
// side sends {code, message, next, retryable} (docs/API.md "Errors"): over
// HTTP as the body of a 4xx/5xx, over Wails as the rejection value (an object,
// or the same object serialised as JSON, or "code: message" text).

/** Codes produced by the client itself, never by the Go side. */
export const CLIENT_CODES = {
  /** The server did not answer (stopped, network down). */
  unreachable: 'unreachable',
  /** The server answered with something that is not the API's JSON. */
  badResponse: 'bad_response',
} as const;

export interface ApiErrorBody {
  code: string;
  message: string;
  next: string;
  retryable: boolean;
  /** next is the error's own step, not the code's default. */
  nextSpecific?: boolean;
}

export class ApiError extends Error implements ApiErrorBody {
  readonly code: string;
  readonly next: string;
  readonly retryable: boolean;
  readonly nextSpecific: boolean;
  /** HTTP status when the error came over HTTP; 0 otherwise. */
  readonly status: number;

  constructor(body: Partial<ApiErrorBody> & { code: string }, status = 0) {
    super(body.message ?? body.code);
    this.name = 'ApiError';
    this.code = body.code;
    this.next = body.next ?? '';
    this.retryable = body.retryable ?? false;
    this.nextSpecific = body.nextSpecific ?? false;
    this.status = status;
  }
}

function isBody(v: unknown): v is Partial<ApiErrorBody> & { code: string } {
  return typeof v === 'object' && v !== null && typeof (v as { code?: unknown }).code === 'string';
}

function fromText(text: string): ApiError | null {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (isBody(parsed)) return new ApiError(parsed);
    } catch {
      // not JSON: fall through to the "code: message" form
    }
  }
  // ErrorBody.Error() in Go is "code: message".
  const m = /^([a-z][a-z0-9_]*): (.+)$/s.exec(trimmed);
  if (m) return new ApiError({ code: m[1]!, message: m[2]! });
  return null;
}

/** Turns anything a transport rejected with into an ApiError. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (isBody(err)) return new ApiError(err);
  if (typeof err === 'string') {
    return fromText(err) ?? new ApiError({ code: 'internal_error', message: err });
  }
  if (err instanceof Error) {
    return fromText(err.message) ?? new ApiError({ code: 'internal_error', message: err.message });
  }
  // Never "[object Object]" (issue 21): an object that is not a body shows
  // its own message, else what it holds.
  if (typeof err === 'object' && err !== null) {
    const msg = (err as { message?: unknown }).message;
    if (typeof msg === 'string') return fromText(msg) ?? new ApiError({ code: 'internal_error', message: msg });
    let text = '';
    try {
      text = JSON.stringify(err);
    } catch {
      text = '';
    }
    return new ApiError({ code: 'internal_error', message: text && text !== '{}' ? text : 'an internal error occurred' });
  }
  return new ApiError({ code: 'internal_error', message: String(err) });
}

/** The code to use when an HTTP error carries no API body. */
export function codeForStatus(status: number): string {
  switch (status) {
    case 400:
      return 'invalid_input';
    case 401:
      return 'unauthorized';
    case 403:
      return 'permission_denied';
    case 404:
      return 'not_found';
    case 409:
      return 'conflict';
  }
  return status >= 500 ? 'internal_error' : CLIENT_CODES.badResponse;
}
