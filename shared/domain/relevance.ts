/**
 * Which judgments are about the matter a query describes: BM25+ ranking (MiniSearch) over the judged texts read
 * for one scope, then a relevance cut so a judgment on an unrelated matter never counts. Pure.
 *
 * Terms: MiniSearch's tokenizer (spaces and punctuation, Unicode-aware), lower-cased, English stop words dropped
 * (they would otherwise make any two texts overlap), plurals folded with the S-stemmer (Harman 1991: `-ies` → `-y`,
 * `-es` → `-e`, `-s` → ``), so "buttons" matches "button". No prefix or fuzzy matching: near-misses are how
 * unrelated matters creep in.
 */
import MiniSearch from 'minisearch';

/** A judgment counts when its BM25 score is at least this share of the best match's... */
export const MIN_RELATIVE_SCORE = 0.3;
/**
 * ...and it shares at least half of the query's distinct terms (rounded up), or MAX_REQUIRED_OVERLAP terms for a
 * long query: "rename the checkout button" must not match "rename the pricing page" on "rename" alone, but a
 * paragraph-long query should not need a judged text phrased word for word like it.
 */
export const MIN_TERM_OVERLAP = 1 / 2;
export const MAX_REQUIRED_OVERLAP = 5;

const STOP_WORDS = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have he her his how i if in into is it its ' +
    'just may me might more most must my no nor not of on or our out over own shall she should so some such than that the ' +
    'their them then there these they this those to too under up us very was we were what when where which while who whom ' +
    'why will with would you your'
  ).split(' '),
);

const tokenize = MiniSearch.getDefault('tokenize') as (text: string) => string[];

/** The S-stemmer (Harman 1991), applied to words of four letters or more. */
function stem(term: string): string {
  if (term.length < 4) return term;
  if (term.endsWith('ies') && !term.endsWith('eies') && !term.endsWith('aies')) return `${term.slice(0, -3)}y`;
  if (term.endsWith('es') && !term.endsWith('aes') && !term.endsWith('ees') && !term.endsWith('oes'))
    return term.slice(0, -1);
  if (term.endsWith('s') && !term.endsWith('us') && !term.endsWith('ss')) return term.slice(0, -1);
  return term;
}

/** A term as indexed and searched, or null for a stop word. */
export function processTerm(term: string): string | null {
  const lower = term.toLowerCase();
  return lower === '' || STOP_WORDS.has(lower) ? null : stem(lower);
}

/** The distinct terms of a text, as processTerm makes them. */
export function termsOf(text: string): string[] {
  return [
    ...new Set(
      tokenize(text)
        .map(processTerm)
        .filter((term): term is string => term !== null),
    ),
  ];
}

export interface Ranked {
  /** In (0, 1]: the BM25 score relative to the best match, times the share of query terms matched. */
  relevance: number;
}

/**
 * The texts relevant to `query`, by index into `texts`: BM25+ score at least MIN_RELATIVE_SCORE of the best, and
 * the minimum overlap with the query's distinct terms. Empty when the query has no terms.
 */
export function rankRelevant(query: string, texts: readonly string[]): Map<number, Ranked> {
  const queryTerms = termsOf(query);
  const relevant = new Map<number, Ranked>();
  if (queryTerms.length === 0 || texts.length === 0) return relevant;
  const index = new MiniSearch<{ id: number; text: string }>({
    fields: ['text'],
    idField: 'id',
    tokenize,
    processTerm,
  });
  index.addAll(texts.map((text, id) => ({ id, text })));
  const results = index.search(query, { combineWith: 'OR', prefix: false, fuzzy: false });
  const best = results[0]?.score ?? 0;
  const minimumOverlap = Math.min(Math.ceil(queryTerms.length * MIN_TERM_OVERLAP), MAX_REQUIRED_OVERLAP);
  for (const result of results) {
    const overlap = new Set(result.queryTerms).size;
    if (result.score < best * MIN_RELATIVE_SCORE || overlap < minimumOverlap) continue;
    relevant.set(result.id as number, { relevance: (result.score / best) * (overlap / queryTerms.length) });
  }
  return relevant;
}
