/**
 * Which activity records are judgments (decisions §9), and what of them Suggest Decision reads. Pure: the activity
 * item builder (shared/db/activity.ts) calls it on every write, so every writer of activity items — Add Activities,
 * an overwrite in a mutable log, a document migration re-putting items — stores the same judgment attributes.
 */
import type { ActivityContent } from '../db/activity';

export type Decision = 'approve' | 'reject';

/** Action types that are judgments by themselves (decisions §9). */
export const JUDGMENT_ACTIONS: Readonly<Record<string, Decision>> = {
  'comment_annotation.suggestion_accept': 'approve',
  'comment_annotation.accept': 'approve',
  'comment_annotation.approve': 'approve',
  'comment_annotation.suggestion_reject': 'reject',
  'comment_annotation.reject': 'reject',
};

/** Values of `entityData.decision` that make any record a judgment (decisions §9), matched exactly. */
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
export function classifyJudgment(content: ActivityContent): Judgment | undefined {
  const entityData = isObject(content.entityData) ? content.entityData : undefined;
  const decision = lookup(JUDGMENT_ACTIONS, content.actionType) ?? lookup(JUDGMENT_DECISIONS, entityData?.decision);
  if (decision === undefined) return undefined;
  const { decision: _decision, reason, ...rest } = entityData ?? {};
  const text = stringContent([content.entityTargetData, entityData === undefined ? content.entityData : rest], MAX_JUDGED_TEXT);
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
