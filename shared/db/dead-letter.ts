/**
 * Dead letters of the table's stream (docs/architecture.md "The stream and the delivery pipeline"): a change a
 * consumer could not handle after its bounded attempts, kept whole so that an operator can replay it
 * (`npm run admin -- replay-dead-letters`) once the cause is fixed. The stream reader writes them itself: Lambda's
 * on-failure destination for a stream receives only the shard and a sequence range, not the records, and the
 * stream forgets them after 24 hours.
 *
 *   pk DEADLETTERS   sk <readerId>#<consumerId>#<eventId>   readerId, consumerId ('*': every consumer of the reader
 *                    that wants the change, for a record the reader could not decode), eventId, sequenceNumber,
 *                    failedAt (ms), failures, error (the last, shortened), record (the stream record as the reader
 *                    got it: gzipped JSON), imagesOmitted (the images did not fit: replay reads the item as it is now)
 *
 * One partition for the whole table: dead letters are rare, an operator reads them all, and the reader's own
 * failures (not a tenant's) put them there. The key is the record's, so writing one twice keeps one.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { batchWrite, putRequest, type Item } from './batch';
import { TABLE_NAME, db } from './client';
import { key, segment } from './keys';
import { queryPage } from './query';

const PARTITION = 'DEADLETTERS';
/**
 * The consumer id of a dead letter that every interested consumer of its reader must take again (a record the
 * reader could not decode; spelled out in shared/domain/stream/dispatch.ts, which loads this module lazily).
 */
export const EVERY_CONSUMER = '*';
/** Room left in DynamoDB's 400 KB item for the rest of the item. */
const MAX_RECORD_BYTES = 350 * 1024;
const MAX_ERROR_CHARS = 1000;

export interface DeadLetter {
  readerId: string;
  consumerId: string;
  eventId: string;
  sequenceNumber: string;
  /** ms */
  failedAt: number;
  /** Times it failed: 1 when written, plus each replay that failed again. */
  failures: number;
  error: string;
  record: DynamoDBRecord;
  imagesOmitted: boolean;
}

const deadLetterKey = (readerId: string, consumerId: string, eventId: string) => ({
  pk: PARTITION,
  sk: key(segment(readerId), segment(consumerId), segment(eventId)),
});

/**
 * JSON of a stream record whose binary attributes survive: the local poller hands them as bytes (a Lambda event
 * carries them as base64 text already).
 */
function recordJson(record: DynamoDBRecord): string {
  return JSON.stringify(record, function (this: Record<string, unknown>, name: string, value: unknown) {
    const original = this[name];
    return original instanceof Uint8Array ? { $bytes: Buffer.from(original).toString('base64') } : value;
  });
}

function parseRecord(json: string): DynamoDBRecord {
  return JSON.parse(json, (_name, value: unknown) => {
    if (
      typeof value === 'object' &&
      value !== null &&
      Object.keys(value).length === 1 &&
      typeof (value as { $bytes?: unknown }).$bytes === 'string'
    ) {
      return Buffer.from((value as { $bytes: string }).$bytes, 'base64');
    }
    return value;
  }) as DynamoDBRecord;
}

/** The record compressed; without its images when even that is too large for an item. */
function packed(record: DynamoDBRecord): { record: Buffer; imagesOmitted: boolean } {
  const whole = gzipSync(recordJson(record));
  if (whole.length <= MAX_RECORD_BYTES) return { record: whole, imagesOmitted: false };
  const { NewImage: _new, OldImage: _old, ...rest } = record.dynamodb ?? {};
  return { record: gzipSync(recordJson({ ...record, dynamodb: rest })), imagesOmitted: true };
}

function deadLetterItem(letter: Omit<DeadLetter, 'imagesOmitted'> & { imagesOmitted?: boolean }): Item {
  const { record, imagesOmitted } = packed(letter.record);
  return {
    ...deadLetterKey(letter.readerId, letter.consumerId, letter.eventId),
    readerId: letter.readerId,
    consumerId: letter.consumerId,
    eventId: letter.eventId,
    sequenceNumber: letter.sequenceNumber,
    failedAt: letter.failedAt,
    failures: letter.failures,
    error: letter.error.slice(0, MAX_ERROR_CHARS),
    record,
    imagesOmitted: imagesOmitted || letter.imagesOmitted === true,
  };
}

function toDeadLetter(item: Item): DeadLetter {
  const record = item.record instanceof Uint8Array ? Buffer.from(item.record) : Buffer.alloc(0);
  return {
    readerId: String(item.readerId),
    consumerId: String(item.consumerId),
    eventId: String(item.eventId),
    sequenceNumber: String(item.sequenceNumber),
    failedAt: Number(item.failedAt),
    failures: Number(item.failures ?? 1),
    error: String(item.error ?? ''),
    record: parseRecord(gunzipSync(record).toString('utf8')),
    imagesOmitted: item.imagesOmitted === true,
  };
}

/** What identifies a record's dead letter: its event id, else its sequence number. */
export const eventIdOf = (record: DynamoDBRecord): string => record.eventID ?? record.dynamodb?.SequenceNumber ?? '';

/** Keeps the records that a consumer of a reader gave up on. Throws when the table refuses: nothing is then kept. */
export async function putDeadLetters(
  readerId: string,
  consumerId: string,
  records: readonly DynamoDBRecord[],
  error: string,
  now = Date.now(),
): Promise<void> {
  await batchWrite(
    records.map((record) =>
      putRequest(
        deadLetterItem({
          readerId,
          consumerId,
          eventId: eventIdOf(record),
          sequenceNumber: record.dynamodb?.SequenceNumber ?? '',
          failedAt: now,
          failures: 1,
          error,
          record,
        }),
      ),
    ),
  );
}

/** One page of dead letters (every reader's, in key order) and where the next starts. */
export async function listDeadLetters(
  limit: number,
  cursor?: Record<string, unknown>,
): Promise<{ letters: DeadLetter[]; cursor?: Record<string, unknown> }> {
  const page = await queryPage(
    { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': PARTITION }, ConsistentRead: true },
    limit,
    cursor,
  );
  return { letters: page.items.map(toDeadLetter), ...(page.cursor === undefined ? {} : { cursor: page.cursor }) };
}

/** A replay that failed again: counted, with its new error. */
export async function recordReplayFailure(letter: DeadLetter, error: string, now = Date.now()): Promise<void> {
  await db.send(
    new PutCommand({
      TableName: TABLE_NAME,
      Item: deadLetterItem({ ...letter, failures: letter.failures + 1, failedAt: now, error }),
    }),
  );
}

/** A replay that succeeded: the dead letter is gone. */
export async function deleteDeadLetter(letter: Pick<DeadLetter, 'readerId' | 'consumerId' | 'eventId'>): Promise<void> {
  await db.send(
    new DeleteCommand({
      TableName: TABLE_NAME,
      Key: deadLetterKey(letter.readerId, letter.consumerId, letter.eventId),
    }),
  );
}

/** The item a record is about, as it is now (a dead letter whose images were omitted); undefined when gone. */
export async function currentItemOf(keys: Record<string, unknown>): Promise<Item | undefined> {
  const { Item: item } = await db.send(new GetCommand({ TableName: TABLE_NAME, Key: keys, ConsistentRead: true }));
  return item;
}
