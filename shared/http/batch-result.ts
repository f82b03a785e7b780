/**
 * Batch results (api-spec common rule 4): `result.data` keyed by item id, each `{success, message, ...}`; the
 * overall status stays success when single items fail.
 */
export type ItemResult = { success: boolean; message: string } & Record<string, unknown>;

export type BatchResult = Record<string, ItemResult>;

/** Builds the keyed result in the order of `ids`. */
export function batchResult<T>(items: readonly T[], idOf: (item: T) => string, resultOf: (item: T) => ItemResult): BatchResult {
  const result: BatchResult = {};
  for (const item of items) result[idOf(item)] = resultOf(item);
  return result;
}
