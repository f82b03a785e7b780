/**
 * The SES transport (docs/decisions.md §12, type `default` in AWS): one SES v2 SendEmail per email, the message
 * composed here (shared/adapters/email/email-message.ts) and sent as `Content.Raw.Data`, from the From address (a verified
 * identity, or one SES_IDENTITY_ARN authorizes), with SES_CONFIGURATION_SET when the operator names one. SES puts
 * its own Message-ID and Date on what it sends; its MessageId is the outcome's providerMessageId.
 *
 * The SES client is built once per process, on first use, with the function's role and `maxAttempts: 1`: each
 * send is one attempt, and the retry schedule is the pipeline's (an SDK retry would also hide attempts from the
 * email log). One deadline (EMAIL_TIMEOUT_MS) bounds the call.
 *
 * Outcomes of SES's errors (SendEmail's documented exceptions first):
 * - retry: TooManyRequestsException and ThrottlingException (the sending rate or the daily quota), LimitExceededException;
 *   SendingPausedException (the account's or the configuration set's sending is paused: the operator resumes it, and
 *   the schedule's ~27 h give that time); any 429 or 5xx; an expired credential; a timeout or a network error (no
 *   HTTP status).
 * - failed: MessageRejected (content, or an unverified recipient in the SES sandbox), MailFromDomainNotVerifiedException,
 *   NotFoundException (the configuration set or identity does not exist), BadRequestException,
 *   AccountSuspendedException (permanent), and any other 4xx (AccessDenied: the role lacks ses:SendEmail).
 * The reason is the error's name and message; SES's errors carry no credential.
 */
import { SendEmailCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { config } from '../../core/config';
import { asciiAddress, composeMessage, oneLine, type OutgoingEmail } from './email-message';
import { failed, retry, type EmailTransport, type SendOutcome } from './email-transport';

export interface SesTransportOptions {
  /** Default: the process's client (sesClient()). Tests pass one with a request handler of their own. */
  client?: SESv2Client;
  /** Default: SES_CONFIGURATION_SET. */
  configurationSetName?: string;
  /** Default: SES_IDENTITY_ARN. */
  identityArn?: string;
  /** Default: EMAIL_TIMEOUT_MS. */
  timeoutMs?: number;
}

let client: SESv2Client | undefined;

/** The process's SES v2 client (the SDK's default region and credentials: the function's own in Lambda). */
export function sesClient(): SESv2Client {
  client ??= new SESv2Client({ maxAttempts: 1 });
  return client;
}

const RETRY_ERRORS = new Set([
  'TooManyRequestsException',
  'ThrottlingException',
  'Throttling',
  'LimitExceededException',
  'SendingPausedException',
  'ExpiredTokenException',
  'RequestExpired',
]);

const FINAL_ERRORS = new Set([
  'MessageRejected',
  'MailFromDomainNotVerifiedException',
  'NotFoundException',
  'BadRequestException',
  'AccountSuspendedException',
]);

/** Aborted by the deadline: the signal's TimeoutError, or the AbortError the SDK's HTTP handler rejects with. */
const DEADLINE_ERRORS = new Set(['TimeoutError', 'AbortError']);

interface ErrorParts {
  name: string;
  message: string;
  httpStatus?: number;
  retryable: boolean;
}

/** Duck-typed: SDK exceptions, node's network errors and abort errors all have a name and a message. */
function partsOf(error: unknown): ErrorParts {
  if (typeof error !== 'object' || error === null) return { name: 'Error', message: String(error), retryable: false };
  const { name, message, $metadata, $retryable } = error as {
    name?: unknown;
    message?: unknown;
    $metadata?: { httpStatusCode?: unknown };
    $retryable?: unknown;
  };
  const httpStatus = typeof $metadata?.httpStatusCode === 'number' ? $metadata.httpStatusCode : undefined;
  return {
    name: typeof name === 'string' ? name : 'Error',
    message: typeof message === 'string' ? oneLine(message) : '',
    ...(httpStatus === undefined ? {} : { httpStatus }),
    retryable: $retryable !== undefined && $retryable !== null,
  };
}

/** The outcome of a SendEmail call that threw `error` (see the module comment). */
export function sesErrorOutcome(error: unknown, timeoutMs: number): SendOutcome {
  const { name, message, httpStatus, retryable } = partsOf(error);
  if (DEADLINE_ERRORS.has(name)) return retry(`SES did not answer within ${timeoutMs / 1000} s.`);
  const reason = `SES ${name}${httpStatus === undefined ? '' : ` (${httpStatus})`}${message === '' ? '.' : `: ${message}`}`;
  if (RETRY_ERRORS.has(name) || retryable) return retry(reason);
  if (FINAL_ERRORS.has(name)) return failed(reason);
  if (httpStatus === undefined || httpStatus === 429 || httpStatus >= 500) return retry(reason);
  return failed(reason);
}

/** The transport that sends through SES. */
export function sesTransport(options: SesTransportOptions = {}): EmailTransport {
  const configurationSetName = options.configurationSetName ?? config.sesConfigurationSet;
  const identityArn = options.identityArn ?? config.sesIdentityArn;
  const timeoutMs = options.timeoutMs ?? config.emailTimeoutMs;
  return {
    name: 'ses',
    async send(email: OutgoingEmail): Promise<SendOutcome> {
      let command: SendEmailCommand;
      try {
        command = new SendEmailCommand({
          // SES takes ASCII addresses only (no SMTPUTF8): the domain punycoded, as the message's headers have it.
          FromEmailAddress: asciiAddress(email.from.address),
          ...(identityArn === undefined ? {} : { FromEmailAddressIdentityArn: identityArn }),
          Destination: { ToAddresses: [asciiAddress(email.to.address)] },
          Content: { Raw: { Data: await composeMessage(email) } },
          ...(configurationSetName === undefined ? {} : { ConfigurationSetName: configurationSetName }),
        });
      } catch (error) {
        return failed(`The email could not be composed: ${error instanceof Error ? error.message : String(error)}`);
      }
      try {
        const output = await (options.client ?? sesClient()).send(command, {
          abortSignal: AbortSignal.timeout(timeoutMs),
        });
        return output.MessageId === undefined
          ? { status: 'sent' }
          : { status: 'sent', providerMessageId: output.MessageId };
      } catch (error) {
        return sesErrorOutcome(error, timeoutMs);
      }
    },
  };
}
