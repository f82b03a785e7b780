/**
 * Suggest Decision (docs/api-spec.md "AI", docs/decisions.md §9): a recommendation drawn from past judgments on the same matter.
 * The judgments of the narrowest scope the request names are read from the judgments index (shared/db/judgment.ts)
 * and ranked against the query (shared/domain/relevance.ts); the scope is widened — document → organization →
 * all content of the API key — while fewer than MIN_SUPPORT relevant judgments back the leading decision.
 *
 * Weight of one relevant judgment: relevance (0..1, see rankRelevant) × 0.5^(age / 180 days).
 * Every reviewer is one voice, as strong as their weightiest relevant judgment, divided between the sides in
 * proportion to the weight of their judgments on each (a reviewer judging ten times is still one voice; one who
 * approved three times and rejected once gives ¾ of it to approve). Judgments without a reviewer share one
 * anonymous voice. Support of a side: the sum of the voices' parts on it.
 * Leading decision: the side with more support (then more judgments, then the newest judgment).
 * confidence = agreement × strength, with agreement = S / (S + O) (this side's support over both sides') and
 * strength = 1 − e^(−S / 2): one fresh, fully relevant reviewer 0.39, two 0.63, three 0.78, five 0.92.
 */
import { queryJudgments, type Decision, type JudgmentScope, type StoredJudgment } from '../db/judgment';
import { rankRelevant } from './relevance';

export type ScopeLevel = JudgmentScope['level'];

export const SCOPE_LABELS: Readonly<Record<ScopeLevel, string>> = {
  document: 'This document',
  organization: 'This organization',
  apiKey: 'All content',
};

/** Longest query accepted, in characters (after trimming): a description of the item, not the item's document. */
export const MAX_QUERY_LENGTH = 2000;
/** Judgments one scope read takes at most (~0.45 KB each: ~55 read units for a full scope, eventually consistent). */
export const MAX_JUDGMENTS_PER_SCOPE = 1000;
/** Relevant judgments a decision needs before it is suggested (docs/decisions.md §9). */
export const MIN_SUPPORT = 2;

const DAY_MS = 24 * 60 * 60 * 1000;
/** Age at which a judgment weighs half as much. */
export const HALF_LIFE_MS = 180 * DAY_MS;
/** A basis is stale when more than STALE_SHARE of its judgments are older than STALE_AFTER_MS (docs/decisions.md §9). */
export const STALE_AFTER_MS = 180 * DAY_MS;
export const STALE_SHARE = 0.7;
/** An opposite judgment this recent is named in the caveats (docs/decisions.md §9). */
export const RECENT_MS = 48 * 60 * 60 * 1000;
/** Support at which strength reaches 1 − 1/e. */
const EVIDENCE_SCALE = 2;

export interface Suggestion {
  recommendation: Decision;
  confidence: number;
  basedOn: number;
  scope: ScopeLevel;
  scopeLabel: string;
  topReasons: string[];
  uniqueReviewers: number;
  caveats: string[];
}

export interface SuggestResult {
  primary: Suggestion | null;
  conflict: Suggestion | null;
}

export interface SuggestInput {
  query: string;
  organizationId?: string;
  documentId?: string;
}

interface Evidence {
  judgment: StoredJudgment;
  relevance: number;
  weight: number;
}

const NO_SUGGESTION: SuggestResult = { primary: null, conflict: null };

/**
 * The suggestion for `input.query`, from the narrowest scope named, widened while it has fewer than MIN_SUPPORT
 * supporting judgments. At most one Query of at most MAX_JUDGMENTS_PER_SCOPE entries per scope tried.
 */
export async function suggestDecision(apiKeyId: string, input: SuggestInput, now = Date.now()): Promise<SuggestResult> {
  for (const scope of scopesFor(input)) {
    const result = evaluate(
      input.query,
      await queryJudgments(apiKeyId, scope, MAX_JUDGMENTS_PER_SCOPE),
      scope.level,
      now,
    );
    if (result.primary !== null) return result;
  }
  return NO_SUGGESTION;
}

/** Narrowest first. The request schema guarantees a documentId comes with an organizationId. */
export function scopesFor(input: SuggestInput): JudgmentScope[] {
  const { organizationId, documentId } = input;
  const scopes: JudgmentScope[] = [{ level: 'apiKey' }];
  if (organizationId !== undefined) scopes.unshift({ level: 'organization', organizationId });
  if (organizationId !== undefined && documentId !== undefined)
    scopes.unshift({ level: 'document', organizationId, documentId });
  return scopes;
}

/** The suggestion the judgments of one scope support for `query`, as of `now`. Pure. */
export function evaluate(
  query: string,
  judgments: readonly StoredJudgment[],
  scope: ScopeLevel,
  now: number,
): SuggestResult {
  const ranked = rankRelevant(
    query,
    judgments.map((judgment) => judgment.text),
  );
  const evidence = judgments.flatMap((judgment, i): Evidence[] => {
    const relevance = ranked.get(i)?.relevance;
    return relevance === undefined
      ? []
      : [{ judgment, relevance, weight: relevance * 0.5 ** (Math.max(0, now - judgment.timestamp) / HALF_LIFE_MS) }];
  });
  const approve = evidence.filter((e) => e.judgment.decision === 'approve');
  const reject = evidence.filter((e) => e.judgment.decision === 'reject');
  const [leading, other] = leads(approve, reject) ? [approve, reject] : [reject, approve];
  if (leading.length < MIN_SUPPORT) return NO_SUGGESTION;
  return {
    primary: suggestion(leading, other, scope, now),
    conflict: other.length >= MIN_SUPPORT ? suggestion(other, leading, scope, now) : null,
  };
}

const reviewerOf = (e: Evidence) => e.judgment.reviewer ?? '';
const newest = (side: readonly Evidence[]) => Math.max(0, ...side.map((e) => e.judgment.timestamp));

/** The support of `side` against `other`: each reviewer's voice, split by the weight of their judgments on each side. */
function support(side: readonly Evidence[], other: readonly Evidence[]): number {
  const reviewers = new Map<string, { voice: number; here: number; total: number }>();
  const add = (e: Evidence, here: boolean) => {
    const entry = reviewers.get(reviewerOf(e)) ?? { voice: 0, here: 0, total: 0 };
    reviewers.set(reviewerOf(e), {
      voice: Math.max(entry.voice, e.weight),
      here: entry.here + (here ? e.weight : 0),
      total: entry.total + e.weight,
    });
  };
  for (const e of side) add(e, true);
  for (const e of other) add(e, false);
  return [...reviewers.values()].reduce((sum, r) => sum + (r.total > 0 ? (r.voice * r.here) / r.total : 0), 0);
}

/** True when `a` leads `b`: more support, then more judgments, then the newer judgment. */
function leads(a: readonly Evidence[], b: readonly Evidence[]): boolean {
  return (support(a, b) - support(b, a) || a.length - b.length || newest(a) - newest(b)) >= 0;
}

function suggestion(side: readonly Evidence[], other: readonly Evidence[], scope: ScopeLevel, now: number): Suggestion {
  const mine = support(side, other);
  const theirs = support(other, side);
  const agreement = mine + theirs > 0 ? mine / (mine + theirs) : side.length / (side.length + other.length);
  const strength = 1 - Math.exp(-mine / EVIDENCE_SCALE);
  return {
    recommendation: side[0].judgment.decision,
    confidence: Math.round(agreement * strength * 1000) / 1000,
    basedOn: side.length,
    scope,
    scopeLabel: SCOPE_LABELS[scope],
    topReasons: topReasons(side),
    uniqueReviewers: new Set(side.map(reviewerOf)).size,
    caveats: caveats(side, other, now),
  };
}

/** Up to three distinct reasons (compared trimmed, ignoring case), most relevant judgment first, then newest. */
function topReasons(side: readonly Evidence[]): string[] {
  const ordered = [...side].sort((a, b) => b.relevance - a.relevance || b.judgment.timestamp - a.judgment.timestamp);
  const reasons = new Map<string, string>();
  for (const { judgment } of ordered) {
    if (judgment.reason !== undefined && !reasons.has(judgment.reason.toLowerCase()))
      reasons.set(judgment.reason.toLowerCase(), judgment.reason);
    if (reasons.size === 3) break;
  }
  return [...reasons.values()];
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The caveats of docs/decisions.md §9, in this order: split, recent opposite judgment, stale basis, single reviewer. */
function caveats(side: readonly Evidence[], other: readonly Evidence[], now: number): string[] {
  const found: string[] = [];
  if (other.length > 0) {
    found.push(
      `Split evidence: ${other.length} of ${plural(side.length + other.length, 'relevant judgment')} went the other way.`,
    );
  }
  if (other.some((e) => now - e.judgment.timestamp <= RECENT_MS)) {
    found.push('Recent opposite judgment: a relevant judgment in the last 48 hours went the other way.');
  }
  const stale = side.filter((e) => now - e.judgment.timestamp > STALE_AFTER_MS).length;
  if (stale > side.length * STALE_SHARE) {
    found.push(`Stale basis: ${stale} of ${plural(side.length, 'supporting judgment')} are older than 180 days.`);
  }
  if (new Set(side.map(reviewerOf)).size === 1) {
    found.push(`Single reviewer: all ${plural(side.length, 'supporting judgment')} come from one reviewer.`);
  }
  return found;
}
