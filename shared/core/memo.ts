/** Read-once values for the life of one unit of work (a stream batch, say). */

/**
 * `read` behind a cache by key: the first call for a key starts the read, later calls share its promise (a
 * failed read is shared too, so a batch does not retry what it already saw fail). Nothing expires: make one per
 * unit of work.
 */
export function memoizedByKey<T>(read: (key: string) => Promise<T>): (key: string) => Promise<T> {
  const cache = new Map<string, Promise<T>>();
  return (key) => {
    let value = cache.get(key);
    if (value === undefined) {
      value = read(key);
      cache.set(key, value);
    }
    return value;
  };
}
