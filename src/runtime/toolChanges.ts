/**
 * Tool registry changes from outside (an MCP server's `listChanged`) wait for a step boundary: a
 * batch never sees its tool set change under it. With no turn running, they apply at once.
 * Browser-safe.
 */
export interface ToolChanges {
  /** Runs `change` now if no turn is running, else before the next step's model request. */
  betweenSteps(change: () => void): void;
  /** Called by the turn runner before each step: applies what waited. */
  apply(): void;
  /** A turn became active (+1) or ended (-1); the last to end applies what waited. */
  onTurnActive(delta: number): void;
}

export function createToolChanges(): ToolChanges {
  let activeTurns = 0;
  const pending: Array<() => void> = [];
  const apply = () => {
    for (const change of pending.splice(0)) change();
  };
  return {
    betweenSteps(change) {
      pending.push(change);
      if (activeTurns === 0) apply();
    },
    apply,
    onTurnActive(delta) {
      activeTurns += delta;
      if (activeTurns === 0) apply();
    },
  };
}
