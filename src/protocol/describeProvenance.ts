/** A result's `decision` as one line (zod-free: the inspector page and terminal views import it). */
import type { DecisionProvenance } from './decisions.js';

/** One line naming who decided: `pre-execute deny by dsh:permissions (permissions[1] (tool "write"))`. */
export function describeProvenance(d: DecisionProvenance): string {
  return `${d.stage} ${d.outcome} by ${d.by}${d.rule === undefined ? '' : ` (${d.rule})`}`;
}
