/**
 * The parts of a live message that came in several base64 frames (decisions §13 "Framing"), kept beside their
 * connection's item until the last part is in:
 *
 *   pk LIVECONN#<connection>   sk CHUNK#<id>#<nnnn>   one part (its base64 text)
 *   pk LIVECONN#<connection>   sk CHUNKS#<id>         the parts in so far (a number set) and the count the first named
 *
 * Frames of one message may be handled side by side (API Gateway invokes a function per frame), so exactly one
 * handler, the one whose part completes the set, reads and joins them.
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchWrite, keyOfItem } from './batch';
import { TABLE_NAME, db } from './client';
import { unlessConditionFails } from './conditional';
import { key, prefix, segment, sortableNumber } from './keys';
import { queryAll } from './query';
import { TTL_ATTRIBUTE } from './table-definition';

/** Parts of a message in several frames: the frames arrive within seconds, or never. */
const CHUNK_TTL_SECONDS = 10 * 60;

const chunkKey = (connectionId: string, messageId: string, index: number) => ({
  pk: key('LIVECONN', segment(connectionId)),
  sk: key('CHUNK', segment(messageId), sortableNumber(index, 4)),
});
const ttl = (now: number, seconds: number) => Math.floor(now / 1000) + seconds;

/** Stores one part of a message that came in several frames. */
export async function putChunk(
  connectionId: string,
  messageId: string,
  index: number,
  part: string,
  now = Date.now(),
): Promise<void> {
  await db.send(
    new PutCommand({
      TableName: TABLE_NAME,
      Item: { ...chunkKey(connectionId, messageId, index), part, [TTL_ATTRIBUTE]: ttl(now, CHUNK_TTL_SECONDS) },
    }),
  );
}

/** Chunks of one message that name different counts: the message is malformed. */
export class ChunkCountMismatchError extends Error {
  constructor() {
    super('the chunks of one message disagree on their count.');
  }
}

/**
 * Counts one more part of a message in; returns the parts in order once the last of `count` distinct parts is in,
 * to exactly one caller (frames of one message may be handled side by side, as API Gateway invokes a function per
 * frame): the count is one UpdateItem adding the part's index to a set, and only the write that completes the set
 * reads the parts (one Query) and deletes them. Undefined while parts are missing. The first part to arrive fixes
 * the message's count; a part that names another count is refused by the same write.
 * @throws ChunkCountMismatchError when the part's count differs from the count of the message's other parts.
 */
export async function countChunk(
  connectionId: string,
  messageId: string,
  index: number,
  count: number,
  now = Date.now(),
): Promise<string[] | undefined> {
  const counter = { pk: key('LIVECONN', segment(connectionId)), sk: key('CHUNKS', segment(messageId)) };
  const counted = await unlessConditionFails(
    db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: counter,
        UpdateExpression:
          'ADD parts :index SET #ttl = if_not_exists(#ttl, :ttl), #count = if_not_exists(#count, :count)',
        ConditionExpression: 'attribute_not_exists(#count) OR #count = :count',
        ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE, '#count': 'count' },
        ExpressionAttributeValues: { ':index': new Set([index]), ':ttl': ttl(now, CHUNK_TTL_SECONDS), ':count': count },
        ReturnValues: 'UPDATED_OLD',
      }),
    ),
  );
  if (counted === undefined) throw new ChunkCountMismatchError();
  // Exactly one write turns the set from count - 1 parts (without this one) into count.
  const before = (counted.Attributes?.parts as Set<number> | undefined) ?? new Set<number>();
  if (before.has(index) || before.size !== count - 1) return undefined;
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :message)',
    ExpressionAttributeValues: { ':pk': counter.pk, ':message': prefix('CHUNK', segment(messageId)) },
    ConsistentRead: true,
  });
  await batchWrite([counter, ...items.map(keyOfItem)].map((itemKey) => ({ DeleteRequest: { Key: itemKey } })));
  return items.slice(0, count).map((item) => String(item.part));
}
