/**
 * Errors as typed classes. Handlers and shared modules throw a ServiceError (or one of the named subclasses);
 * the error mapper (shared/http/middleware.ts) turns it into the error envelope and the HTTP status below.
 * Anything that is not a ServiceError becomes INTERNAL with no internals in the body.
 */

export const STATUS_BY_CODE = {
  INVALID_ARGUMENT: 400,
  FAILED_PRECONDITION: 400,
  OUT_OF_RANGE: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  ABORTED: 409,
  RESOURCE_EXHAUSTED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
} as const;

export type ErrorCode = keyof typeof STATUS_BY_CODE;

export interface ServiceErrorOptions {
  details?: unknown;
  /** HTTP status when it differs from the code's default (413 for an oversized body, 404/405 from the gateway). */
  httpStatus?: number;
  /** Extra response headers (`Retry-After`, `Allow`). */
  headers?: Record<string, string>;
}

export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly details?: unknown;
  readonly httpStatus: number;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: ServiceErrorOptions = {}) {
    super(message);
    this.name = 'ServiceError';
    this.code = code;
    this.details = options.details;
    this.httpStatus = options.httpStatus ?? STATUS_BY_CODE[code];
    this.headers = options.headers ?? {};
  }
}

export class InvalidArgumentError extends ServiceError {
  constructor(message: string, options?: ServiceErrorOptions) {
    super('INVALID_ARGUMENT', message, options);
  }
}

/** One failing field of a request: `path` like `data.users.0.userId`. */
export interface FieldIssue {
  path: string;
  message: string;
}

/**
 * The INVALID_ARGUMENT of validation (docs/decisions.md §1): the first issues in the message, every issue in
 * `details.issues`. Used by the validation middleware and by rules that span fields.
 */
export function invalidFields(issues: FieldIssue[]): InvalidArgumentError {
  const summary = issues
    .slice(0, 3)
    .map((issue) => `${issue.path}: ${issue.message}`)
    .join('; ');
  const more = issues.length > 3 ? ` (and ${issues.length - 3} more)` : '';
  return new InvalidArgumentError(`Invalid argument: ${summary}${more}`, { details: { issues } });
}

export class NotFoundError extends ServiceError {
  constructor(message: string) {
    super('NOT_FOUND', message);
  }
}

export class AlreadyExistsError extends ServiceError {
  constructor(message: string) {
    super('ALREADY_EXISTS', message);
  }
}

export class PermissionDeniedError extends ServiceError {
  constructor(message: string) {
    super('PERMISSION_DENIED', message);
  }
}

export class UnauthenticatedError extends ServiceError {
  constructor(message: string) {
    super('UNAUTHENTICATED', message);
  }
}

export class FailedPreconditionError extends ServiceError {
  constructor(message: string) {
    super('FAILED_PRECONDITION', message);
  }
}

export class ResourceExhaustedError extends ServiceError {
  /**
   * `retryAfterSeconds`, for a limit that waiting lifts (a rate limit's window), becomes the `Retry-After` header:
   * when the next attempt may succeed. A count limit (endpoints per key, workspaces per email) passes none: no wait
   * lifts it, so a `Retry-After` would only tell clients to retry in vain.
   */
  constructor(message: string, retryAfterSeconds?: number) {
    super(
      'RESOURCE_EXHAUSTED',
      message,
      retryAfterSeconds === undefined
        ? {}
        : { headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) } },
    );
  }
}

export class AbortedError extends ServiceError {
  /**
   * A conflict that retrying resolves: `retryAfterSeconds` becomes the `Retry-After` header, so clients wait before
   * the retry instead of colliding again at once.
   */
  constructor(message: string, retryAfterSeconds = 1) {
    super('ABORTED', message, { headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) } });
  }
}

/** DynamoDB's throttling errors, after the SDK's own retries: the client may retry shortly (UNAVAILABLE). */
const BUSY_ERRORS = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded']);

/** True when `error` is storage throttling that outlasted the SDK's retries. */
export function isBusy(error: unknown): boolean {
  return error instanceof Error && BUSY_ERRORS.has(error.name);
}

/**
 * What a client may read of any error: a ServiceError as it is; throttling as UNAVAILABLE; anything else as
 * INTERNAL with a fixed message, never its own text. The one mapping the error envelope and per-item results use.
 */
export function publicErrorOf(error: unknown): ServiceError {
  if (error instanceof ServiceError) return error;
  if (isBusy(error))
    return new ServiceError('UNAVAILABLE', 'The service is busy; retry shortly.', { headers: { 'Retry-After': '1' } });
  return new ServiceError('INTERNAL', 'Internal error.');
}
