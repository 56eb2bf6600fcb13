// Types a UI reads (checked by `npm run typecheck`, which runs before the suite): an approval's
// preview is the protocol's ApprovalPreview (issue 32 item 7), not `unknown`.
import { describe, expectTypeOf, it } from 'vitest';
import type { ApprovalPreview } from '../../src/protocol/index.js';
import type { SessionApproval } from '../../src/view/index.js';

describe('view types', () => {
  it('SessionApproval.preview is an ApprovalPreview', () => {
    expectTypeOf<SessionApproval['preview']>().toEqualTypeOf<ApprovalPreview | undefined>();
  });
});
