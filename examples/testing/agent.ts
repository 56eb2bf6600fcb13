/**
 * A refund desk: the agent of an app that uses dsh. It looks orders up, and refunds them through a
 * payment provider (here an in-memory stand-in: `ledger`), asking a person before any refund over
 * 100. `refundsAreIdempotent: false` is the planted bug `explore` finds in agent.test.ts: a refund
 * that is paid, then the process dies before its result is durable, is paid again when the
 * session goes on.
 */
import { createRuntime, defineTool, type Runtime } from 'dsh';
import type { ExploreWorld } from 'dsh/testing';
import { z } from 'zod';

/** What the payment provider has paid out, per order. Outside the session: it survives a crash. */
export type Ledger = Map<string, number[]>;

export interface RefundDeskOptions {
  ledger: Ledger;
  /** Pass the order id to the provider as an idempotency key (the fix). */
  refundsAreIdempotent: boolean;
}

const ORDERS: Record<string, number> = { 'A-1': 40, 'B-2': 250 };

export function refundDesk(world: ExploreWorld, options: RefundDeskOptions): Runtime {
  const lookupOrder = defineTool({
    name: 'lookupOrder',
    description: 'The amount of an order',
    input: z.object({ order: z.string() }),
    readOnly: true,
    isConcurrencySafe: () => true,
    execute: ({ order }) => ({ order, amount: ORDERS[order] ?? 0 }),
  });
  const refund = defineTool({
    name: 'refund',
    description: 'Refund an order in full',
    input: z.object({ order: z.string() }),
    execute: ({ order }) => {
      const paid = options.ledger.get(order) ?? [];
      if (options.refundsAreIdempotent && paid.length > 0) return `order ${order} was already refunded`;
      options.ledger.set(order, [...paid, ORDERS[order] ?? 0]);
      return `refunded ${ORDERS[order]} for order ${order}`;
    },
  });
  const rt = createRuntime({ ...world, tools: [lookupOrder, refund] });
  rt.hooks.on('tools/pre-execute', 'ask-big-refunds', (call) =>
    call.toolName === 'refund' && (ORDERS[(call.args as { order: string }).order] ?? 0) > 100 ? { kind: 'ask', reason: 'a refund over 100' } : undefined,
  );
  return rt;
}
