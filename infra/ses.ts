/**
 * Amazon SES for the `default` email transport in AWS (docs/decisions.md §12): the operator names the verified
 * identity the delivery worker sends from (CDK context `sesIdentity`), optionally a configuration set
 * (`sesConfigurationSet`) and, to send from another account's identity under its sending authorization policy, that
 * identity's ARN (`sesIdentityArn`). Checked at synthesis, so a typo fails `cdk synth`, not the first email.
 *
 * A function whose entry declares `ses: 'send'` (shared/grants.ts) gets SES_SEND_ACTIONS on exactly the identity's
 * ARN and the configuration set's ARN, never a wildcard, and the environment the transport reads:
 * - SES_IDENTITY, the identity's name: that SES is set up at all (without it the worker fails emails with a reason);
 * - SES_CONFIGURATION_SET, when one is named: the transport sends with it;
 * - SES_IDENTITY_ARN, only for sending authorization: the transport passes it as FromEmailAddressIdentityArn. For the
 *   account's own identity it is left unset, since SES finds its own verified identity from the From address.
 * Without an identity no function gets an SES permission at all.
 */
import { ArnFormat, Stack, Token } from 'aws-cdk-lib';
import type { Construct } from 'constructs';

/** The operator's SES settings, as the context gives them. */
export interface SesProps {
  /** The verified identity: a domain (`example.com`) or an address (`notifications@example.com`). */
  readonly identity?: string;
  /** A configuration set of this account and region to send with. */
  readonly configurationSet?: string;
  /**
   * Sending authorization: the ARN of another account's identity whose policy lets this account send. Its name is
   * the identity; `identity`, when also given, must be the same.
   */
  readonly identityArn?: string;
}

/** What a function that sends email is granted and told. */
export interface SesSending {
  /** SES_IDENTITY: the identity's name, as SES lists it. */
  readonly identity: string;
  /** The identity the grant names: this account's and region's, or the authorizing one. */
  readonly identityArn: string;
  /** SES_IDENTITY_ARN: set for sending authorization only. */
  readonly authorizingIdentityArn?: string;
  /** SES_CONFIGURATION_SET */
  readonly configurationSet?: string;
  readonly configurationSetArn?: string;
}

/** One DNS label: letters, digits and hyphens, not at either end, at most 63 characters. */
const DOMAIN_LABEL = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;
/** The local part of an address as a dot-atom (RFC 5322), without `*`, `?` and `$` (see assertValidSesIdentity). */
const LOCAL_PART = /^[A-Za-z0-9!#%&'+/=^_`{|}~-]+(?:\.[A-Za-z0-9!#%&'+/=^_`{|}~-]+)*$/;
/** SES's rule for configuration set names. */
const CONFIGURATION_SET_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** An SES identity ARN, the same shape shared/core/config.ts accepts for SES_IDENTITY_ARN. */
const IDENTITY_ARN = /^arn:aws[a-z-]*:ses:([a-z0-9-]+):(\d{12}):identity\/(\S+)$/;

function isDomain(name: string): boolean {
  const labels = name.split('.');
  const last = labels[labels.length - 1];
  // At least two labels, and a top-level one that is not all digits (an IP address is no SES identity).
  return (
    name.length <= 253 && labels.length >= 2 && labels.every((label) => DOMAIN_LABEL.test(label)) && !/^\d+$/.test(last)
  );
}

/**
 * A domain or an address, ASCII, naming one identity. It becomes the end of an IAM resource ARN, where `*` and `?`
 * are wildcards and `${...}` a policy variable: each of them would widen the grant beyond the identity, so they are
 * refused, as is anything else that is no domain or address.
 */
export function assertValidSesIdentity(identity: string, source = 'context sesIdentity'): void {
  const subject = `The SES identity "${identity}" (${source})`;
  if (/[*?$]/.test(identity)) {
    throw new Error(
      `${subject} must name one identity: no wildcard (* or ?) or policy variable ($), which would widen the IAM grant.`,
    );
  }
  if (/[^\x21-\x7e]/.test(identity)) {
    throw new Error(
      `${subject} must be ASCII without spaces: write an internationalized domain in punycode (xn--...), as SES lists it.`,
    );
  }
  const at = identity.lastIndexOf('@');
  const valid =
    at === -1
      ? isDomain(identity)
      : at <= 64 && LOCAL_PART.test(identity.slice(0, at)) && isDomain(identity.slice(at + 1));
  if (!valid) {
    throw new Error(`${subject} must be a verified domain (example.com) or email address (notifications@example.com).`);
  }
}

export function assertValidConfigurationSet(name: string): void {
  if (!CONFIGURATION_SET_NAME.test(name)) {
    throw new Error(
      `The SES configuration set "${name}" (context sesConfigurationSet) must be 1-64 letters, digits, underscores or hyphens, as SES names them.`,
    );
  }
}

/** The authorizing identity's ARN, checked; its name and region. */
function parseIdentityArn(arn: string): { identity: string; region: string } {
  const match = IDENTITY_ARN.exec(arn);
  if (match === null) {
    throw new Error(
      `The SES identity ARN "${arn}" (context sesIdentityArn) must be arn:aws:ses:<region>:<account>:identity/<domain or address>.`,
    );
  }
  const [, region, , identity] = match;
  assertValidSesIdentity(identity, 'the identity of context sesIdentityArn');
  return { identity, region };
}

/**
 * The SES settings of a deployment, checked, with the ARNs its grant names; undefined when no identity is named (then
 * no function may send email through SES). Throws on a value SES would not accept.
 */
export function sesSending(scope: Construct, props: SesProps): SesSending | undefined {
  const { identity, configurationSet, identityArn } = props;
  if (identity !== undefined) assertValidSesIdentity(identity);
  if (configurationSet !== undefined) assertValidConfigurationSet(configurationSet);
  const stack = Stack.of(scope);
  const authorizing = identityArn === undefined ? undefined : parseIdentityArn(identityArn);
  if (authorizing !== undefined) {
    if (identity !== undefined && identity !== authorizing.identity) {
      throw new Error(
        `Context sesIdentity "${identity}" and sesIdentityArn (identity "${authorizing.identity}") must name the same identity; sesIdentityArn alone is enough.`,
      );
    }
    // SES identities are regional and the worker calls SES in its own region. An environment-agnostic stack's
    // region is only known at deployment; then SES answers a mismatch with an error the email log shows.
    if (!Token.isUnresolved(stack.region) && stack.region !== authorizing.region) {
      throw new Error(
        `The SES identity ARN "${identityArn}" (context sesIdentityArn) is in ${authorizing.region}, but the stack deploys to ${stack.region}: SES sends only from identities of its own region.`,
      );
    }
  }
  const name = identity ?? authorizing?.identity;
  if (name === undefined) {
    if (configurationSet !== undefined)
      throw new Error('Context sesConfigurationSet needs sesIdentity: a configuration set alone sends nothing.');
    return undefined;
  }
  const arnOf = (resource: string, resourceName: string): string =>
    stack.formatArn({ service: 'ses', resource, resourceName, arnFormat: ArnFormat.SLASH_RESOURCE_NAME });
  return {
    identity: name,
    identityArn: identityArn ?? arnOf('identity', name),
    ...(identityArn === undefined ? {} : { authorizingIdentityArn: identityArn }),
    ...(configurationSet === undefined
      ? {}
      : { configurationSet, configurationSetArn: arnOf('configuration-set', configurationSet) }),
  };
}
