/**
 * What a piece of work writes to stdout and stderr, with the logger at DEBUG meanwhile (for "no secret in any log
 * line" tests), or left silent (for "writes nothing" tests).
 */
import { logger } from '../../shared/core/logger';

export async function captureOutput(
  work: () => Promise<unknown>,
  options: { logLevel: 'DEBUG' | 'SILENT' } = { logLevel: 'DEBUG' },
): Promise<string> {
  const lines: string[] = [];
  const capture = (chunk: unknown) => {
    lines.push(String(chunk));
    return true;
  };
  const stdout = jest.spyOn(process.stdout, 'write').mockImplementation(capture);
  const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(capture);
  logger.setLogLevel(options.logLevel);
  try {
    await work();
  } finally {
    logger.setLogLevel('SILENT');
    stdout.mockRestore();
    stderr.mockRestore();
  }
  return lines.join('');
}
