import type { StoredJudgment } from '../../shared/db/judgment';
import { processTerm, rankRelevant } from '../../shared/domain/relevance';
import { evaluate, scopesFor } from '../../shared/domain/suggestions';

const NOW = Date.UTC(2026, 0, 15);
const DAY = 24 * 60 * 60 * 1000;
const MATTER = 'Rename the checkout button to Pay now';
const QUERY = 'rename checkout button label';

let counter = 0;
function judgment(decision: 'approve' | 'reject', fields: Partial<StoredJudgment> = {}): StoredJudgment {
  counter += 1;
  return {
    id: `j${counter}`,
    decision,
    text: MATTER,
    reviewer: `reviewer-${counter}`,
    timestamp: NOW - DAY,
    ...fields,
  };
}
const many = (n: number, decision: 'approve' | 'reject', fields: Partial<StoredJudgment> = {}) =>
  Array.from({ length: n }, () => judgment(decision, fields));

describe('relevance', () => {
  it('ranks texts on the same matter and leaves out texts on an unrelated one', () => {
    const texts = [
      MATTER,
      'Switch the dashboard to dark mode',
      'The checkout button should be renamed',
      'Fix the typo in the footer',
    ];

    const relevant = rankRelevant(QUERY, texts);

    expect([...relevant.keys()].sort()).toEqual([0, 2]);
    expect(Math.max(...[...relevant.values()].map((r) => r.relevance))).toBeLessThanOrEqual(1);
  });

  it('does not let stop words alone make a text relevant', () => {
    expect(rankRelevant('the and of to', ['the end of the road']).size).toBe(0);
    expect(rankRelevant('what to do with the logo', ['the colour of the footer']).size).toBe(0);
  });

  it('needs half of the query terms: a shared action on another subject is not the same matter', () => {
    const relevant = rankRelevant('rename the checkout button', [
      'Rename the pricing page',
      'Rename the checkout button',
      'Rename the search bar',
    ]);

    expect([...relevant.keys()]).toEqual([1]);
  });

  it('needs at most five shared terms for a long query', () => {
    const query =
      'migrate the billing invoices of every european customer to the new payment provider before the march release';
    const judged = 'Migrate billing invoices to the payment provider';

    expect([...rankRelevant(query, [judged, 'Unrelated text about the march release']).keys()]).toEqual([0]);
  });

  it('does not count one shared word of a long query as the same matter', () => {
    const relevant = rankRelevant('migrate billing invoices to the new payment provider before March', [
      'Move the invoices page',
      'Migrate billing invoices to a new payment provider',
    ]);

    expect([...relevant.keys()]).toEqual([1]);
  });

  it('folds plurals and case', () => {
    expect(processTerm('Buttons')).toBe('button');
    expect(processTerm('policies')).toBe('policy');
    expect(processTerm('status')).toBe('status');
    expect(processTerm('the')).toBeNull();
  });
});

describe('evaluate', () => {
  it('suggests nothing when fewer than 2 relevant judgments support the leading decision', () => {
    const result = evaluate(
      QUERY,
      [judgment('approve'), judgment('reject', { text: 'Dark mode for the dashboard' })],
      'organization',
      NOW,
    );

    expect(result).toEqual({ primary: null, conflict: null });
  });

  it('suggests the agreed decision with its scope, reviewers and reasons', () => {
    const judgments = [
      judgment('approve', { reason: 'Clearer wording' }),
      judgment('approve', { reason: 'clearer wording' }),
      judgment('approve', { reason: 'Matches the brand guide' }),
    ];

    const { primary, conflict } = evaluate(QUERY, judgments, 'document', NOW);

    expect(primary).toEqual({
      recommendation: 'approve',
      confidence: expect.any(Number),
      basedOn: 3,
      scope: 'document',
      scopeLabel: 'This document',
      topReasons: ['Clearer wording', 'Matches the brand guide'],
      uniqueReviewers: 3,
      caveats: [],
    });
    expect(primary?.confidence).toBeGreaterThan(0.5);
    expect(primary?.confidence).toBeLessThanOrEqual(1);
    expect(conflict).toBeNull();
  });

  it('orders reasons by relevance and keeps at most three', () => {
    const judgments = [
      judgment('reject', { text: 'checkout', reason: 'least relevant' }),
      judgment('reject', { reason: 'a' }),
      judgment('reject', { reason: 'b' }),
      judgment('reject', { reason: 'c' }),
    ];

    expect(evaluate(QUERY, judgments, 'apiKey', NOW).primary?.topReasons).toEqual(['a', 'b', 'c']);
  });

  it('fills the conflict when both sides have at least 2, and names the split on both', () => {
    const { primary, conflict } = evaluate(QUERY, [...many(3, 'approve'), ...many(2, 'reject')], 'organization', NOW);

    expect(primary?.recommendation).toBe('approve');
    expect(conflict?.recommendation).toBe('reject');
    expect(primary?.caveats).toContain('Split evidence: 2 of 5 relevant judgments went the other way.');
    expect(conflict?.caveats).toContain('Split evidence: 3 of 5 relevant judgments went the other way.');
    expect(conflict?.confidence).toBeLessThan(primary?.confidence ?? 0);
  });

  it('raises confidence with agreeing judgments from new reviewers, not with more from the same reviewer', () => {
    const base = many(2, 'approve');
    const confidence = (judgments: StoredJudgment[]) =>
      evaluate(QUERY, judgments, 'apiKey', NOW).primary?.confidence ?? 0;

    const withNewReviewers = confidence([...base, ...many(3, 'approve')]);
    const withSameReviewer = confidence([...base, ...many(3, 'approve', { reviewer: base[0].reviewer })]);

    expect(withNewReviewers).toBeGreaterThan(confidence(base));
    expect(withSameReviewer).toBe(confidence(base));
  });

  it('counts a reviewer who judged both ways once, split by how they judged', () => {
    const confidence = (judgments: StoredJudgment[]) =>
      evaluate(QUERY, judgments, 'apiKey', NOW).primary?.confidence ?? 0;
    const approvals = many(3, 'approve');
    const turncoat = approvals[0].reviewer;

    const withOwnDoubt = confidence([
      ...approvals,
      judgment('approve', { reviewer: turncoat }),
      judgment('approve', { reviewer: turncoat }),
      judgment('reject', { reviewer: turncoat }),
    ]);
    const withNewDissent = confidence([...approvals, judgment('reject')]);

    expect(withOwnDoubt).toBeLessThan(confidence(approvals));
    expect(withOwnDoubt).toBeGreaterThan(withNewDissent);
  });

  it('lowers confidence with conflict and with age', () => {
    const confidence = (judgments: StoredJudgment[]) =>
      evaluate(QUERY, judgments, 'apiKey', NOW).primary?.confidence ?? 0;
    const fresh = confidence(many(3, 'approve'));

    expect(confidence([...many(3, 'approve'), judgment('reject')])).toBeLessThan(fresh);
    expect(confidence(many(3, 'approve', { timestamp: NOW - 400 * DAY }))).toBeLessThan(fresh);
  });

  it('names a stale basis when more than 70 % of the supporting judgments are older than 180 days', () => {
    const stale = 'Stale basis: 3 of 4 supporting judgments are older than 180 days.';
    const old = { timestamp: NOW - 181 * DAY };

    expect(
      evaluate(QUERY, [...many(3, 'approve', old), judgment('approve')], 'apiKey', NOW).primary?.caveats,
    ).toContain(stale);
    expect(
      evaluate(QUERY, [...many(2, 'approve', old), ...many(2, 'approve')], 'apiKey', NOW).primary?.caveats,
    ).toEqual([]);
  });

  it('names a single reviewer', () => {
    const { primary } = evaluate(QUERY, many(3, 'reject', { reviewer: 'only-one' }), 'apiKey', NOW);

    expect(primary?.uniqueReviewers).toBe(1);
    expect(primary?.caveats).toEqual(['Single reviewer: all 3 supporting judgments come from one reviewer.']);
  });

  it('names an opposite judgment of the last 48 hours, and not an older one', () => {
    const recent = 'Recent opposite judgment: a relevant judgment in the last 48 hours went the other way.';
    const supporting = many(3, 'approve', { timestamp: NOW - 10 * DAY });

    expect(
      evaluate(QUERY, [...supporting, judgment('reject', { timestamp: NOW - 47 * 60 * 60 * 1000 })], 'apiKey', NOW)
        .primary?.caveats,
    ).toContain(recent);
    expect(
      evaluate(QUERY, [...supporting, judgment('reject', { timestamp: NOW - 49 * 60 * 60 * 1000 })], 'apiKey', NOW)
        .primary?.caveats,
    ).not.toContain(recent);
  });

  it('ignores judgments on an unrelated matter', () => {
    const unrelated = many(5, 'reject', { text: 'Switch the dashboard to dark mode' });

    const { primary, conflict } = evaluate(QUERY, [...many(2, 'approve'), ...unrelated], 'apiKey', NOW);

    expect(primary).toMatchObject({ recommendation: 'approve', basedOn: 2, caveats: [] });
    expect(conflict).toBeNull();
  });
});

describe('scopesFor', () => {
  it('starts at the narrowest scope named and widens to all content', () => {
    expect(scopesFor({ query: 'q', organizationId: 'o', documentId: 'd' }).map((s) => s.level)).toEqual([
      'document',
      'organization',
      'apiKey',
    ]);
    expect(scopesFor({ query: 'q', organizationId: 'o' }).map((s) => s.level)).toEqual(['organization', 'apiKey']);
    expect(scopesFor({ query: 'q' }).map((s) => s.level)).toEqual(['apiKey']);
  });
});
