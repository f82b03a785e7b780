import {
  mergeActivityConfig,
  presentActivityConfig,
  STANDARD_COMMENT_TRIGGERS,
} from '../../shared/domain/activity-config';

describe('activity config merge', () => {
  const now = 1_700_000_000_000;

  it('does not seed when the update does not enable the service', () => {
    expect(mergeActivityConfig(undefined, { immutable: false }, now)).toEqual({ immutable: false });
  });

  it('does not reseed over stored triggers on a later enable', () => {
    const stored = { isEnabled: false, enabledTime: 5, triggers: { comment: { 'comment.add': false } } };

    expect(mergeActivityConfig(stored, { isEnabled: true }, now)).toEqual({ ...stored, isEnabled: true });
  });

  it('seeds every standard trigger on first enable', () => {
    const merged = mergeActivityConfig(undefined, { isEnabled: true }, now);

    expect(merged).toEqual({
      isEnabled: true,
      immutable: true,
      enabledTime: now,
      triggers: { comment: Object.fromEntries(STANDARD_COMMENT_TRIGGERS.map((t) => [t, true])) },
    });
  });

  it('presents isEnabled false when nothing is stored', () => {
    expect(presentActivityConfig(undefined)).toEqual({ isEnabled: false });
  });
});
