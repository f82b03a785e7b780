/**
 * The representative activity record of the cost benches and test/connected/activity-cost.test.ts: a comment
 * status change with a comment text, of about `bytes` bytes of JSON. Its text is words drawn deterministically from a vocabulary (not one sentence repeated,
 * which compresses far better than real text: the stored content is compressed, so the filler decides the figure).
 * On a 1.5 KB record brotli gets ~2.3x, within the 2-3x real activity JSON gets.
 */
const VOCABULARY = (
  'the a proposal review section paragraph wording clarify budget timeline owner milestone risk launch customer ' +
  'feedback design draft final approve change request update comment reply thread mention deadline quarter scope ' +
  'estimate team engineering marketing legal sales support priority blocker issue resolve agree suggest rewrite ' +
  'sentence table figure chart data source link reference version history edit delete move merge split rename ' +
  'title summary intro conclusion appendix note question answer concern follow up next week monday friday meeting ' +
  'call sync decision action item assign pending done open closed in progress we should could would please maybe ' +
  'also but and or because since however therefore this that these those it its our their your my is are was were ' +
  'be been will can may must not no yes all some any more less first second third last new old same different ' +
  'clear unclear better worse'
).split(' ');

/** mulberry32: a small deterministic generator, so every run measures the same text. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `bytes` characters of words from the vocabulary, the same for the same seed. */
export function prose(seed: number, bytes: number): string {
  const next = generator(seed);
  const words: string[] = [];
  let length = 0;
  while (length < bytes) {
    const word = VOCABULARY[Math.floor(next() * VOCABULARY.length)];
    words.push(word);
    length += word.length + 1;
  }
  return words.join(' ').slice(0, bytes);
}

export interface RecordShape {
  /** With `actionUser` (the acting user's timeline). Default true. */
  user?: boolean;
  /** With `targetEntityId` (the target entity's timeline). Default true. */
  target?: boolean;
  /** Seed of the comment text; by default derived from the id, so records differ. */
  seed?: number;
}

/** A realistic activity record of about `bytes` bytes of JSON. */
export function activityRecord(id: string, bytes: number, shape: RecordShape = {}) {
  const base = {
    id,
    featureType: 'comment',
    actionType: 'comment.update',
    ...(shape.user === false
      ? {}
      : { actionUser: { userId: 'user-00001', name: 'User 00001', email: 'user00001@example.com' } }),
    ...(shape.target === false ? {} : { targetEntityId: 'annotation-000001' }),
    changes: { from: { status: 'open' }, to: { status: 'in_progress' } },
    displayMessageTemplate: '{{actionUser.name}} changed the status of a comment to {{to.status}}',
    displayMessageTemplateData: { to: { status: 'in_progress' } },
    actionIcon: 'https://example.com/icons/status.svg',
  };
  const room = Math.max(0, bytes - JSON.stringify(base).length - 23);
  const seed = shape.seed ?? [...id].reduce((hash, char) => Math.imul(hash, 31) + char.charCodeAt(0), 7);
  return { ...base, entityData: { text: prose(seed, room) } };
}
