/**
 * The local stand-in for an EventBridge schedule: runs a scheduled worker's handler every `everyMs` (after each run
 * ends, so runs never overlap), until stopped. A run that throws is logged; the next one runs on time, as the next
 * scheduled invocation does in AWS.
 */

export interface ScheduledRunner {
  /** No run starts after this; resolves when the run in progress (if any) has ended. */
  stop(): Promise<void>;
}

export function startScheduledRunner(options: {
  name: string;
  everyMs: number;
  run: () => Promise<unknown>;
}): ScheduledRunner {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  const runOnce = async (): Promise<void> => {
    try {
      await options.run();
    } catch (error) {
      console.error(`Scheduled worker ${options.name}: a run failed; the next runs on time.`, error);
    }
  };
  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = runOnce().then(() => {
        running = undefined;
        schedule();
      });
    }, options.everyMs);
  };
  schedule();

  return {
    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await running;
    },
  };
}
