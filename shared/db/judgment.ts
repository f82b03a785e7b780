/**
 * The judgments index: judgment activity records (docs/decisions.md §9) as entries of the sparse gsi5, keyed so each
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
 *
 * Which records are judgments (classifyJudgment) is decided here too, pure, because the activity item builder
 * (shared/db/activity.ts) calls it on every write: every writer of activity items — Add Activities, an overwrite
 * in a mutable log, a document migration re-putting items — stores the same judgment attributes.
 */
import type { Item } from './batch';
import { key, prefix, segment, tenantKey } from './keys';
import { queryAll } from './query';

export type Decision = 'approve' | 'reject';

/** Action types that are judgments by themselves (docs/decisions.md §9). */
export const JUDGMENT_ACTIONS: Readonly<Record<string, Decision>> = {
  'comment_annotation.suggestion_accept': 'approve',
  'comment_annotation.accept': 'approve',
  'comment_annotation.approve': 'approve',
  'comment_annotation.suggestion_reject': 'reject',
  'comment_annotation.reject': 'reject',
};

/** Values of `entityData.decision` that make any record a judgment (docs/decisions.md §9), matched exactly. */
export const JUDGMENT_DECISIONS: Readonly<Record<string, Decision>> = {
  approved: 'approve',
  agree: 'approve',
  endorse: 'approve',
  document_approved: 'approve',
  rejected: 'reject',
  disagree: 'reject',
  document_rejected: 'reject',
};

/**
 * What is stored of the judged text and the reason. Relevance needs the words of the matter, not a whole
 * document; the caps keep the judgments index small (a suggest call reads up to 1,000 of its entries per scope).
 */
export const MAX_JUDGED_TEXT = 1000;
export const MAX_REASON = 500;

/**
 * What classification reads of an activity record (ActivityContent has it; named here so that this module, which
 * shared/db/activity.ts imports, needs nothing from there).
 */
export interface JudgedContent {
  actionType: string;
  actionUser?: { userId: string };
  entityData?: unknown;
  entityTargetData?: unknown;
}

export interface Judgment {
  decision: Decision;
  /** String content of entityTargetData, then of entityData without `decision` and `reason`; at most MAX_JUDGED_TEXT. */
  text: string;
  /** `entityData.reason` when it is a non-blank string, trimmed, at most MAX_REASON. */
  reason?: string;
  /** `actionUser.userId`. */
  reviewer?: string;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * The judgment a record carries, or undefined. The action type decides first (it names what the user did); a
 * record with another action type is a judgment when `entityData.decision` is one of the decision values.
 */
export function classifyJudgment(content: JudgedContent): Judgment | undefined {
  const entityData = isObject(content.entityData) ? content.entityData : undefined;
  const decision = lookup(JUDGMENT_ACTIONS, content.actionType) ?? lookup(JUDGMENT_DECISIONS, entityData?.decision);
  if (decision === undefined) return undefined;
  const { decision: _decision, reason, ...rest } = entityData ?? {};
  const text = stringContent(
    [content.entityTargetData, entityData === undefined ? content.entityData : rest],
    MAX_JUDGED_TEXT,
  );
  const trimmedReason = typeof reason === 'string' ? reason.trim().slice(0, MAX_REASON) : '';
  return {
    decision,
    text,
    ...(trimmedReason === '' ? {} : { reason: trimmedReason }),
    ...(content.actionUser === undefined ? {} : { reviewer: content.actionUser.userId }),
  };
}

/** An own entry only: `constructor` or `__proto__` sent as an action type is not a decision. */
const lookup = (table: Readonly<Record<string, Decision>>, value: unknown): Decision | undefined =>
  typeof value === 'string' && Object.hasOwn(table, value) ? table[value] : undefined;

/**
 * The strings inside `values` (object values and array items at any depth, in document order), joined by
 * newlines and cut at `max` characters. Iterative, and it stops once `max` is reached, so a deep or huge record
 * costs no more than the text it yields.
 */
export function stringContent(values: readonly unknown[], max: number): string {
  const parts: string[] = [];
  let length = 0;
  const stack: unknown[] = [...values].reverse();
  while (stack.length > 0 && length < max) {
    const value = stack.pop();
    if (typeof value === 'string') {
      const trimmed = value.trim();
      if (trimmed === '') continue;
      parts.push(trimmed);
      length += trimmed.length + 1;
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i -= 1) stack.push(value[i]);
    } else if (isObject(value)) {
      const children = Object.values(value);
      for (let i = children.length - 1; i >= 0; i -= 1) stack.push(children[i]);
    }
  }
  return parts.join('\n').slice(0, max);
}

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
      scope.level === 'document'
        ? prefix(segment(scope.organizationId), segment(scope.documentId))
        : prefix(segment(scope.organizationId));
    condition += ' AND begins_with(gsi5sk, :prefix)';
  }
  const items = await queryAll(
    { IndexName: INDEX, KeyConditionExpression: condition, ExpressionAttributeValues: values, ScanIndexForward: false },
    limit,
  );
  return items.map(toJudgment);
}
