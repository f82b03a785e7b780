/** Queries shared by the entity modules: a partition read to its end (or to a cap), and one page of a query with its cursor. */
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Item } from './batch';
import { TABLE_NAME, db } from './client';

/** What a query reads, without the table, the page size and the position (filled in by the helpers below). */
export type QuerySpec = Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey' | 'Limit'>;

/**
 * A Query read to its end, or to `max` items, page after page: for partitions whose size is bounded by design (a
 * user's grants), or reads the caller caps (the judgments of a scope).
 */
export async function queryAll(input: QuerySpec, max = Infinity): Promise<Item[]> {
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

export interface QueryPage {
  items: Item[];
  /** Where the next page starts; absent when the query has been read to its end. */
  cursor?: Record<string, unknown>;
}

/** At most `limit` items of the query after `cursor` (one Query call; fewer when DynamoDB's 1 MB page ends first). */
export async function queryPage(input: QuerySpec, limit: number, cursor?: Record<string, unknown>): Promise<QueryPage> {
  const page = await db.send(new QueryCommand({ ...input, TableName: TABLE_NAME, ExclusiveStartKey: cursor, Limit: limit }));
  return { items: page.Items ?? [], ...(page.LastEvaluatedKey === undefined ? {} : { cursor: page.LastEvaluatedKey }) };
}
