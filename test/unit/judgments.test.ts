import type { ActivityContent } from '../../shared/db/activity';
import { MAX_JUDGED_TEXT, MAX_REASON, classifyJudgment } from '../../shared/db/judgment';

const record = (fields: Partial<ActivityContent>): ActivityContent => ({
  id: 'a1',
  featureType: 'comment',
  actionType: 'comment.add',
  ...fields,
});

describe('classifyJudgment', () => {
  it.each([
    ['comment_annotation.suggestion_accept', 'approve'],
    ['comment_annotation.accept', 'approve'],
    ['comment_annotation.approve', 'approve'],
    ['comment_annotation.suggestion_reject', 'reject'],
    ['comment_annotation.reject', 'reject'],
  ])('counts the action type %s as %s', (actionType, decision) => {
    expect(classifyJudgment(record({ actionType }))?.decision).toBe(decision);
  });

  it.each([
    ['approved', 'approve'],
    ['agree', 'approve'],
    ['endorse', 'approve'],
    ['document_approved', 'approve'],
    ['rejected', 'reject'],
    ['disagree', 'reject'],
    ['document_rejected', 'reject'],
  ])('counts entityData.decision %s as %s, whatever the action type', (value, decision) => {
    expect(
      classifyJudgment(record({ featureType: 'custom', actionType: 'custom.review', entityData: { decision: value } }))
        ?.decision,
    ).toBe(decision);
  });

  it.each([
    ['another action type', record({ actionType: 'comment_annotation.status_change' })],
    ['an unknown decision value', record({ entityData: { decision: 'maybe' } })],
    ['a decision value in other case', record({ entityData: { decision: 'Approved' } })],
    ['a decision that is not a string', record({ entityData: { decision: true } })],
    ['a decision nested deeper', record({ entityData: { review: { decision: 'approved' } } })],
    ['entityData that is a string', record({ entityData: 'approved' })],
    ['an inherited property name as action type', record({ actionType: 'constructor' })],
    ['an inherited property name as decision', record({ entityData: { decision: '__proto__' } })],
  ])('does not count %s', (_, content) => {
    expect(classifyJudgment(content)).toBeUndefined();
  });

  it('lets the action type decide when entityData.decision says otherwise', () => {
    expect(
      classifyJudgment(record({ actionType: 'comment_annotation.reject', entityData: { decision: 'approved' } }))
        ?.decision,
    ).toBe('reject');
  });

  it('takes the judged text from entityTargetData and entityData without decision and reason, in order', () => {
    const judgment = classifyJudgment(
      record({
        actionType: 'comment_annotation.suggestion_accept',
        actionUser: { userId: 'rev-1', name: 'Ann' },
        entityTargetData: { title: 'Rename the checkout button', meta: { count: 3, tags: ['ui', ' copy '] } },
        entityData: {
          decision: 'approved',
          reason: '  clearer wording ',
          comment: 'Say "Pay now"',
          nested: [{ note: 'ok' }],
          n: 4,
        },
        changes: { ignored: 'not judged' },
      }),
    );

    expect(judgment).toEqual({
      decision: 'approve',
      text: 'Rename the checkout button\nui\ncopy\nSay "Pay now"\nok',
      reason: 'clearer wording',
      reviewer: 'rev-1',
    });
  });

  it('keeps a string entityData as judged text when the action type makes it a judgment', () => {
    expect(
      classifyJudgment(record({ actionType: 'comment_annotation.accept', entityData: 'use metric units' }))?.text,
    ).toBe('use metric units');
  });

  it('leaves out a blank or non-string reason and a missing reviewer', () => {
    const judgment = classifyJudgment(record({ entityData: { decision: 'rejected', reason: '   ' } }));

    expect(judgment).toEqual({ decision: 'reject', text: '' });
  });

  it('caps the judged text and the reason, and reads no further than the cap in a deep record', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 10_000; i += 1) deep = [deep];
    const judgment = classifyJudgment(
      record({
        actionType: 'comment_annotation.accept',
        entityTargetData: ['x'.repeat(5000), deep],
        entityData: { reason: 'r'.repeat(2000) },
      }),
    );

    expect(judgment?.text).toHaveLength(MAX_JUDGED_TEXT);
    expect(judgment?.reason).toHaveLength(MAX_REASON);
  });

  it('walks records nested deeper than the call stack would allow', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100_000; i += 1) deep = { level: deep };

    expect(classifyJudgment(record({ actionType: 'comment_annotation.accept', entityTargetData: deep }))?.text).toBe(
      'bottom',
    );
  });
});
