/**
 * `Idempotency-Key` on every POST (docs/decisions.md §1): a client that retries a request with the same key and body
 * within 24 h gets the first answer again, and nothing changes twice.
 *
 * The records are kept by Powertools Idempotency's DynamoDB persistence layer (conditional in-progress put,
 * expiry, an in-progress expiry for a function that dies half-way, a hash of the request to tell a reuse of the
 * key with another body) in the service's table:
 *
 *   pk IDEMPOTENCY#<path>#<sha256 of [scope, key]>   sk IDEMPOTENCY   status, ttl, data (the answer), validation
 *
 * `scope` is who asked (the API key, the workspace, or the source IP for Create Workspace), so one caller's key
 * never meets another's. The middleware runs after authentication (a replay needs the caller's credentials) and
 * before validation, and records the final answer: success envelopes and every 4xx, never a 5xx (the record is
 * deleted, so the retry runs again). Read-only routes keep records too; their role may write only items whose
 * partition key starts with IDEMPOTENCY# (shared/grants.ts).
 *
 * The middleware loads this module (and Powertools Idempotency with it, ~40 KB) with the first request that carries
 * an Idempotency-Key; the key's checks are in idempotency-key.ts.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  IdempotencyConfig,
  IdempotencyItemAlreadyExistsError,
  IdempotencyRecordStatus,
  IdempotencyValidationError,
} from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { TABLE_NAME, dynamodb } from '../db/client';
import { TTL_ATTRIBUTE } from '../db/table-definition';
import { IDEMPOTENCY_KEY_PREFIX } from '../grants';
import type { HttpResult } from './envelope';
import { InvalidArgumentError, ServiceError } from '../core/errors';
import type { IdempotentRequest } from './idempotency-key';
import { logger } from '../core/logger';

const RECORD_LIFETIME_SECONDS = 24 * 60 * 60;
/** Answers larger than this are stored gzipped: an item holds at most 400 KB, a listing page can be ~1 MB. */
const COMPRESS_ABOVE_BYTES = 32 * 1024;

/** The answer as stored: the HTTP result, its body gzipped and base64-encoded when large. */
interface StoredAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  gzip?: true;
}

/** One item per record in the service's table, keyed as the module comment shows. */
class TablePersistence extends DynamoDBPersistenceLayer {
  override getKey(idempotencyKey: string): Record<string, AttributeValue> {
    return marshall({ pk: idempotencyKey, sk: 'IDEMPOTENCY' });
  }
}

const persistenceByPath = new Map<string, TablePersistence>();

/** One persistence layer per path (the local gateway serves every path from one process). */
function persistenceFor(path: string): TablePersistence {
  let persistence = persistenceByPath.get(path);
  if (persistence === undefined) {
    persistence = new TablePersistence({
      tableName: TABLE_NAME,
      keyAttr: 'pk',
      expiryAttr: TTL_ATTRIBUTE,
      awsSdkV3Client: dynamodb,
    });
    persistence.configure({
      config: new IdempotencyConfig({
        eventKeyJmesPath: '[scope, key]',
        payloadValidationJmesPath: 'data',
        expiresAfterSeconds: RECORD_LIFETIME_SECONDS,
        hashFunction: 'sha256',
      }),
      keyPrefix: `${IDEMPOTENCY_KEY_PREFIX}${path}`,
    });
    persistenceByPath.set(path, persistence);
  }
  return persistence;
}

function store(result: HttpResult): StoredAnswer {
  const body = result.body ?? '';
  const headers = { ...result.headers };
  if (Buffer.byteLength(body) <= COMPRESS_ABOVE_BYTES) return { statusCode: result.statusCode, headers, body };
  return { statusCode: result.statusCode, headers, body: gzipSync(body).toString('base64'), gzip: true };
}

function replay(stored: StoredAnswer, requestId: string): HttpResult {
  const body = stored.gzip === true ? gunzipSync(Buffer.from(stored.body, 'base64')).toString('utf8') : stored.body;
  return {
    statusCode: stored.statusCode,
    headers: { ...stored.headers, 'x-request-id': requestId, 'Idempotent-Replayed': 'true' },
    body,
  };
}

const REUSED = 'Idempotency-Key was already used with a different request.';

/**
 * Claims the key for this request. Returns the first answer when the key was used before with the same request
 * (the caller answers with it), undefined when this request is the first and should run. Throws
 * InvalidArgumentError when the key was used with another request, AbortedError (Retry-After: 1) while the first
 * is still running.
 */
export async function claim(
  path: string,
  request: IdempotentRequest,
  remainingMs: number,
  requestId: string,
): Promise<HttpResult | undefined> {
  const persistence = persistenceFor(path);
  try {
    await persistence.saveInProgress(request, remainingMs);
    return undefined;
  } catch (error) {
    if (!(error instanceof IdempotencyItemAlreadyExistsError)) throw error;
    const record = error.existingRecord ?? (await persistence.getRecord(request));
    try {
      persistence.processExistingRecord(record, request);
    } catch (mismatch) {
      if (mismatch instanceof IdempotencyValidationError) throw new InvalidArgumentError(REUSED);
      throw mismatch;
    }
    if (record.getStatus() === IdempotencyRecordStatus.COMPLETED && record.responseData !== undefined) {
      return replay(record.responseData as unknown as StoredAnswer, requestId);
    }
    throw new ServiceError('ABORTED', 'A request with this Idempotency-Key is still in progress; retry shortly.', {
      headers: { 'Retry-After': '1' },
    });
  }
}

/**
 * Records how the claimed request ended: the answer of a success or a 4xx, kept for 24 h; after a 5xx the claim is
 * released so that a retry runs again. A failure to record is logged, never turned into the request's answer.
 */
export async function settle(path: string, request: IdempotentRequest, result: HttpResult): Promise<void> {
  const persistence = persistenceFor(path);
  try {
    if (result.statusCode >= 500) await persistence.deleteRecord(request);
    else await persistence.saveSuccess(request, { ...store(result) });
  } catch (error) {
    logger.error('could not record the idempotent answer', error instanceof Error ? error : String(error));
    await persistence.deleteRecord(request).catch(() => undefined);
  }
}
