/**
 * `npm run stack-figures`: synthesizes the app as `cdk synth` does (default context, stage dev; then again with
 * `-c reserveConcurrency=true` for the reservation figures) and prints the docs' block of figures about the stacks
 * (infra/stack-figures.ts). `npm run stack-figures -- --write` writes them to docs/stack-figures.md. Offline: no
 * AWS credentials, and bundling is skipped (it changes no figure), so it takes seconds.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { buildApp } from '../infra/app';
import { type SynthesizedStack, FIGURES_FILE, renderFigures, stackFigures, writeFigures } from '../infra/stack-figures';

/** The parent template, then each nested stack's, of the app built from `context`. */
function synthesize(context: Record<string, string>): SynthesizedStack[] {
  // Version reporting on, as cdk synth and cdk deploy have it: the CDKMetadata resources count towards the limit.
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [], 'aws:cdk:version-reporting': true, ...context } });
  const stack = buildApp(app);
  return [stack, ...stack.nestedStacks].map((each) => ({
    name: each.node.id,
    resources: Template.fromStack(each).toJSON().Resources,
  }));
}

const page = renderFigures(stackFigures(synthesize({}), synthesize({ reserveConcurrency: 'true' })));
if (process.argv.includes('--write'))
  console.log(
    writeFigures(page)
      ? `${FIGURES_FILE}: stack figures rewritten.`
      : `${FIGURES_FILE}: the stack figures were up to date.`,
  );
else process.stdout.write(page);
