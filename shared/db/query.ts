/**
 * A Query read to its end (or to `max` items), page after page: for partitions whose size is bounded by design
 * (a user's grants), or reads capped by the caller (the judgments of a scope).
 */
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Item } from './batch';
import { TABLE_NAME, db } from './client';

export async function queryAll(input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey' | 'Limit'>, max = Infinity): Promise<Item[]> {
  const items: Item[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const limit = Number.isFinite(max) ? { Limit: max - items.length } : {};
    const page = await db.send(new QueryCommand({ ...input, ...limit, TableName: TABLE_NAME, ExclusiveStartKey: start }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start && items.length < max);
  return items;
}
