/**
 * The shapes of the examples a rule carries (ruleExamples.ts checks them). A file of its own so
 * that the rules' types (permissionRules.ts, applyConfig.ts) and the checker import them without a
 * circle.
 */

/** An example call: the tool and its arguments. */
export interface ExampleCall {
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
}

/** What the policies must decide about each example (a bash pattern's examples are commands). */
export interface RuleExamples<C> {
  readonly allow?: readonly C[];
  readonly ask?: readonly C[];
  readonly deny?: readonly C[];
}
