/**
 * Turns the live metrics on for one test file and reads what they write: imported first (before any module of the
 * service loads, since shared/core/metrics.ts builds its Powertools Metrics, which reads the environment, when it
 * loads), it undoes table-per-file.ts's POWERTOOLS_METRICS_DISABLED and names a namespace of its own.
 */
process.env.POWERTOOLS_METRICS_DISABLED = 'false';
process.env.POWERTOOLS_METRICS_NAMESPACE = 'collab-backend/test';

/** One EMF object as Powertools writes it: the directive, then the dimensions' and the metrics' values. */
export interface EmfObject {
  readonly _aws: {
    readonly CloudWatchMetrics: ReadonlyArray<{
      readonly Namespace: string;
      readonly Dimensions: string[][];
      readonly Metrics: Array<{ Name: string; Unit: string }>;
    }>;
  };
  readonly [key: string]: unknown;
}

/** The EMF objects `work` writes to stdout (other output is passed through), and what `work` settled with. */
export async function captureMetrics(
  work: () => Promise<unknown>,
): Promise<{ emitted: EmfObject[]; outcome: PromiseSettledResult<unknown> }> {
  const emitted: EmfObject[] = [];
  const write = process.stdout.write.bind(process.stdout);
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    const text = String(chunk);
    for (const line of text.split('\n')) {
      if (line.includes('"_aws"')) emitted.push(JSON.parse(line) as EmfObject);
    }
    return text.includes('"_aws"') ? true : write(chunk);
  });
  try {
    const [outcome] = await Promise.allSettled([work()]);
    return { emitted, outcome };
  } finally {
    spy.mockRestore();
  }
}

/** The value of `metric` summed over the objects whose dimensions match `dimensions` (0 when none has it). */
export function metricSum(emitted: readonly EmfObject[], metric: string, dimensions: Record<string, string>): number {
  return emitted
    .filter((object) => Object.entries(dimensions).every(([name, value]) => object[name] === value))
    .filter((object) =>
      object._aws.CloudWatchMetrics.some((directive) =>
        directive.Metrics.some((definition) => definition.Name === metric),
      ),
    )
    .reduce((sum, object) => {
      const value = object[metric];
      return sum + (Array.isArray(value) ? value.reduce((a: number, b: number) => a + b, 0) : Number(value));
    }, 0);
}
