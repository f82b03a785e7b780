import { maskSecret } from '../../shared/crypto/encryption';
import { isMaskedForm, secretChange, type SealedSecret } from '../../shared/crypto/sealed-secret';
import { updateExpression, type ConfigUpdate } from '../../shared/db/versioned-item';
import { STANDARD_COMMENT_TRIGGERS, planActivityUpdate } from '../../shared/domain/activity-config';
import { AbortedError, InvalidArgumentError } from '../../shared/core/errors';
import { errorMapper } from '../../shared/http/middleware';

const now = 1_700_000_000_000;
const seal = async (plaintext: string): Promise<SealedSecret> => ({
  ciphertext: `sealed:${plaintext}`,
  masked: maskSecret(plaintext),
});
const triggers = (count: number, prefix = 'custom.') =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}${i}`, true]));

describe('activity config write plans', () => {
  it('creates the whole merged config when nothing is stored', () => {
    expect(planActivityUpdate(undefined, { isEnabled: true }, now)).toEqual({
      create: {
        isEnabled: true,
        immutable: true,
        enabledTime: now,
        triggers: { comment: Object.fromEntries(STANDARD_COMMENT_TRIGGERS.map((t) => [t, true])) },
      },
    });
  });

  it('sets one path per sent trigger, conditioned on the map and on room for the new ones', () => {
    const stored = { isEnabled: true, enabledTime: 1, triggers: { comment: { 'comment.add': true } } };

    const plan = planActivityUpdate(stored, { triggers: { comment: { 'comment.add': false, 'custom.x': true } } }, now);

    expect(plan).toEqual({
      update: {
        set: [
          { path: ['triggers', 'comment', 'comment.add'], value: false },
          { path: ['triggers', 'comment', 'custom.x'], value: true },
        ],
        remove: [],
        conditions: [{ exists: ['triggers', 'comment'] }, { atMost: ['triggers', 'comment'], entries: 499 }],
      },
    });
  });

  it('seeds the whole trigger map only while none is stored, and fills defaults only where nothing is stored', () => {
    const plan = planActivityUpdate({ immutable: false }, { isEnabled: true }, now);

    expect(plan).toMatchObject({
      update: {
        set: [
          { path: ['isEnabled'], value: true },
          { path: ['triggers'], value: { comment: expect.objectContaining({ 'comment.add': true }) } },
          { path: ['enabledTime'], value: now, ifAbsent: true },
        ],
        conditions: [{ absent: ['triggers'] }],
      },
    });
  });

  it('refuses an update that would hold more than 500 triggers', () => {
    const stored = { triggers: { comment: triggers(450) } };

    expect(() => planActivityUpdate(stored, { triggers: { comment: triggers(51, 'other.') } }, now)).toThrow(
      InvalidArgumentError,
    );
  });
});

describe('config update expressions', () => {
  it('names every path segment through a placeholder, so client keys are never parsed as syntax', () => {
    const update: ConfigUpdate = {
      set: [{ path: ['triggers', 'a.b #c :d'], value: true }],
      remove: [['x']],
      conditions: [{ equals: ['k', 'masked'], value: '****1234' }],
    };

    const expression = updateExpression(update);

    expect(Object.values(expression.ExpressionAttributeNames)).toEqual(
      expect.arrayContaining(['config', 'triggers', 'a.b #c :d', 'x', 'k', 'masked', 'version']),
    );
    expect(expression.UpdateExpression).not.toContain('a.b');
    expect(expression.ConditionExpression).toMatch(/^attribute_exists\(#\w+\) AND #\w+\.#\w+\.#\w+ = :\w+$/);
  });

  it("stays under DynamoDB's 4 KB per expression for the largest request: 100 triggers beside every field", () => {
    const sent = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`${'t'.repeat(190)}${i}`, i % 2 === 0]));
    const stored = { isEnabled: true, enabledTime: 1, triggers: { comment: { other: true } } };
    const plan = planActivityUpdate(
      stored,
      { isEnabled: true, immutable: true, enabledTime: 5, triggers: { comment: sent } },
      now,
    );
    if (!('update' in plan)) throw new Error('expected an update');

    const expression = updateExpression(plan.update);

    expect(expression.UpdateExpression.length).toBeLessThan(4096);
    expect(expression.ConditionExpression.length).toBeLessThan(4096);
  });
});

describe('masked secrets', () => {
  it('recognises every form maskSecret gives, and no ordinary key', () => {
    for (const secret of ['', 'a', 'abcd', 'abcdefg', 'sk-1234567890', 'SG.x*y*z', `${'k'.repeat(300)}****`]) {
      expect(isMaskedForm(maskSecret(secret))).toBe(true);
    }
    for (const key of ['sk-1234567890', '***abcd', 'abc****', '*a**bcdefgh', 'SG.****'])
      expect(isMaskedForm(key)).toBe(false);
  });

  it('keeps the stored secret for its own mask, under the condition that it is still the one with that mask', async () => {
    const stored = await seal('sk-stored-secret-WXYZ');

    expect(await secretChange(stored.masked, stored, seal, 'data.key')).toEqual({
      action: 'keep',
      masked: stored.masked,
    });
  });

  it('refuses a masked form that keeps nothing, and never seals it', async () => {
    const stored = await seal('sk-stored-secret-WXYZ');
    const sealing = jest.fn(seal);

    await expect(secretChange('************ABCD', undefined, sealing, 'data.key')).rejects.toThrow(
      InvalidArgumentError,
    );
    await expect(secretChange('*****************ABCD', stored, sealing, 'data.key')).rejects.toThrow(
      InvalidArgumentError,
    );
    expect(sealing).not.toHaveBeenCalled();
  });
});

describe('ABORTED', () => {
  it('carries Retry-After through the error mapper, like RESOURCE_EXHAUSTED', async () => {
    const request = {
      event: {},
      context: { awsRequestId: 'r1' },
      error: new AbortedError('Changed concurrently; retry.'),
      response: undefined,
    };

    await errorMapper().onError?.(request as never);

    const response = request.response as unknown as { statusCode: number; headers: Record<string, string> };
    expect(response.statusCode).toBe(409);
    expect(response.headers['Retry-After']).toBe('1');
  });
});
