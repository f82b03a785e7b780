/**
 * The judgments index: judgment activity records (decisions §9) as entries of the sparse gsi5, keyed so each
 * Suggest Decision scope is one Query (O = the organization segment, D = the document segment, empty for a
 * record without a documentId, `<pos>` the record's timeline position `<ts>#<seq>#<id>`):
 *
 *   gsi5pk T#<key>#JUDGMENTS   gsi5sk <O>#<D>#<pos>
 *      document scope      begins_with(gsi5sk, <O>#<D>#)
 *      organization scope  begins_with(gsi5sk, <O>#)
 *      apiKey scope        the whole partition
 *
 * The entry is not an item of its own: the activity item carries the index keys and the judgment attributes
 * (built by activityItem through judgmentAttributes below), so DynamoDB writes the entry atomically with the
 * record, a transaction of 100 records stays 100 items, an overwrite that is no longer a judgment drops it, and a
 * record re-put under another documentId moves it. The index projects only JUDGMENT_INDEX_ATTRIBUTES.
 */
import type { Decision, Judgment } from '../domain/judgments';
import type { Item } from './batch';
import { key, prefix, segment, tenantKey } from './keys';
import { queryAll } from './query';

const INDEX = 'gsi5';

/** A judgment as the index returns it. */
export interface StoredJudgment extends Judgment {
  /** The index sort key: unique within the tenant. */
  id: string;
  documentId?: string;
  /** Server time of the record's write, ms. */
  timestamp: number;
}

/** Where a suggestion looks: one document, one organization, or everything of the API key. */
export type JudgmentScope =
  | { level: 'document'; organizationId: string; documentId: string }
  | { level: 'organization'; organizationId: string }
  | { level: 'apiKey' };

const partition = (apiKeyId: string) => tenantKey(apiKeyId, 'JUDGMENTS');

/**
 * The attributes that put an activity item into the judgments index; none for a record that is not a judgment
 * (so a Put of such a record leaves the index). Names as in JUDGMENT_INDEX_ATTRIBUTES; `userId`, `timestamp` and
 * `documentId` are the activity item's own.
 */
export function judgmentAttributes(
  apiKeyId: string,
  record: { organizationId: string; documentId?: string; position: string },
  judgment: Judgment | undefined,
): Item {
  if (judgment === undefined) return {};
  const documentSegment = record.documentId === undefined ? '' : segment(record.documentId);
  return {
    judgment: judgment.decision,
    judgedText: judgment.text,
    ...(judgment.reason === undefined ? {} : { judgmentReason: judgment.reason }),
    gsi5pk: partition(apiKeyId),
    gsi5sk: key(segment(record.organizationId), documentSegment, record.position),
  };
}

function toJudgment(item: Item): StoredJudgment {
  return {
    id: String(item.gsi5sk),
    decision: item.judgment as Decision,
    text: String(item.judgedText ?? ''),
    ...(typeof item.judgmentReason === 'string' ? { reason: item.judgmentReason } : {}),
    ...(typeof item.userId === 'string' ? { reviewer: item.userId } : {}),
    ...(typeof item.documentId === 'string' ? { documentId: item.documentId } : {}),
    timestamp: Number(item.timestamp),
  };
}

/**
 * At most `limit` judgments of the scope, read backwards in key order: a document's newest first; in a wider
 * scope, document by document (descending document id), each newest first. Eventually consistent; the cost is
 * the entries read (~0.45 KB each), never the activity log.
 */
export async function queryJudgments(apiKeyId: string, scope: JudgmentScope, limit: number): Promise<StoredJudgment[]> {
  const values: Record<string, unknown> = { ':pk': partition(apiKeyId) };
  let condition = 'gsi5pk = :pk';
  if (scope.level !== 'apiKey') {
    values[':prefix'] =
      scope.level === 'document' ? prefix(segment(scope.organizationId), segment(scope.documentId)) : prefix(segment(scope.organizationId));
    condition += ' AND begins_with(gsi5sk, :prefix)';
  }
  const items = await queryAll(
    { IndexName: INDEX, KeyConditionExpression: condition, ExpressionAttributeValues: values, ScanIndexForward: false },
    limit,
  );
  return items.map(toJudgment);
}
