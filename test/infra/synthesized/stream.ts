/**
 * The table's stream has few readers (docs/architecture.md "The stream and the delivery pipeline"): AWS advises at
 * most two per shard, and Lambda allows five filter patterns per event source mapping, however many consumers are
 * declared.
 */
import { grantsFor } from '../../../shared/grants';
import { workers } from '../../../shared/workers';
import { functionWithDescription, grantsOf, resourcesOfType, synthesize } from '../templates';

const deployment = synthesize();

const streamMappings = () =>
  resourcesOfType(deployment, 'AWS::Lambda::EventSourceMapping').filter(
    (mapping) => mapping.resource.Properties.StartingPosition !== undefined,
  );

describe('the table stream', () => {
  it('has at most two event source mappings on it, whatever the number of consumers', () => {
    const mappings = streamMappings();

    expect(mappings.length).toBeGreaterThan(0);
    expect(mappings.length).toBeLessThanOrEqual(2);
  });

  it('filters each mapping with at most five patterns', () => {
    const patternCounts = streamMappings().map(
      (mapping) => (mapping.resource.Properties.FilterCriteria as { Filters: unknown[] }).Filters.length,
    );

    expect(Math.max(...patternCounts)).toBeLessThanOrEqual(5);
  });

  it.each(workers.flatMap((worker) => worker.consumers.map((consumer) => [consumer.id, worker, consumer] as const)))(
    "%s: its reader's role holds every grant it declares",
    (_, worker, consumer) => {
      const granted = grantsOf(functionWithDescription(deployment, worker.summary)).join('\n');
      const declared = grantsFor(consumer);

      for (const action of [...declared.tableActions, ...declared.queueActions, ...declared.kmsActions])
        expect(granted).toContain(action);
      for (const index of declared.indexes) expect(granted).toContain(`index/${index}`);
    },
  );
});
