import { packGroups, type WriteGroup } from '../../shared/domain/document-locks';
import type { TransactItem } from '../../shared/db/transact';

const put = (n: number): TransactItem => ({ Put: { TableName: 't', Item: { pk: `p${n}`, sk: 's' } } });
const group = (first: number, size: number, documentIds: string[] = []): WriteGroup => ({
  items: Array.from({ length: size }, (_, i) => put(first + i)),
  documents: documentIds.map((documentId) => ({ organizationId: 'o', documentId })),
});
const shape = (packed: WriteGroup[]) => packed.map((t) => [t.items.length, t.documents.map((d) => d.documentId)]);

describe('packing guarded writes into transactions', () => {
  it('puts everything into one transaction when writes and lock checks fit 100 items', () => {
    const packed = packGroups([group(0, 49, ['a']), group(49, 49, ['a'])], group(100, 1));

    expect(shape(packed)).toEqual([[99, ['a']]]);
  });

  it('counts one lock check per distinct document and starts a new transaction when the next group would pass 100', () => {
    const groups = Array.from({ length: 60 }, (_, i) => group(i, 1, [`d${i}`]));

    const packed = packGroups(groups);

    expect(shape(packed).map(([items, documents]) => [items, (documents as string[]).length])).toEqual([
      [50, 50],
      [10, 10],
    ]);
    for (const transaction of packed)
      expect(transaction.items.length + transaction.documents.length).toBeLessThanOrEqual(100);
  });

  it('never splits a group, and keeps the leading writes first in the first transaction', () => {
    const packed = packGroups([group(0, 60, ['x']), group(60, 60, ['y'])], group(200, 2, ['x']));

    expect(shape(packed)).toEqual([
      [62, ['x']],
      [60, ['y']],
    ]);
    expect(packed[0].items[0]).toEqual(put(200));
  });

  it('names the groups each transaction holds, in order, so a failure part way tells which were written', () => {
    const packed = packGroups(Array.from({ length: 60 }, (_, i) => group(i, 1, [`d${i}`])));

    expect(packed.map((transaction) => transaction.groups)).toEqual([
      Array.from({ length: 50 }, (_, i) => i),
      Array.from({ length: 10 }, (_, i) => 50 + i),
    ]);
  });

  it('refuses a group that cannot fit one transaction with its checks', () => {
    expect(() => packGroups([group(0, 100, ['a'])])).toThrow('A write group does not fit one transaction.');
  });

  it('writes nothing for no groups', () => {
    expect(packGroups([])).toEqual([]);
  });
});
