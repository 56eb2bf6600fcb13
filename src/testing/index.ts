/**
 * `dsh/testing` (Node): test your own agent through every path. `explore` runs it through every
 * approval answer, body ending, completion order, cancel and crash its configuration allows and
 * judges each run by dsh's SPEC and your invariants; the fakes script a model (and the errors a
 * provider throws), a clock, tools and a log. See docs/testing.md, "Testing your agent".
 */
export { explore, formatReport, type ExploreOptions, type ExploreReport, type ExploreFailure, type ExploredChoices } from './explore/explore.js';
export type { ExploreWorld, RuntimeFactory, ExploredRun, ExploredTurn, BodyRecord, Invariant } from './explore/world.js';
export { judgeBySpec, SPEC_RULES, type SpecViolation } from './explore/specOracle.js';
export type { AgentCoverage, MachineReach, ToolReach } from './explore/agentCoverage.js';
export { scriptedModel, type ScriptedModel, type ScriptedResponse, type ScriptedStep, type ScriptedToolCall, type ScriptedModelOptions, type ScriptedRequest, type ScriptedCall, type ScriptedStreamError, type ChunkDelay } from '../adapters/model/scriptedModel.js';
export { apiCallError, contextOverflowError, rateLimitError, serverError } from '../adapters/model/modelErrors.js';
export { ManualClock } from '../runtime/clock.js';
export { fakeTool, type FakeTool, type FakeToolCall, type FakeToolOptions } from './fakes/fakeTool.js';
export { faultyLog, LogFaultError, type FaultyLogOptions } from './fakes/faultyLog.js';
export { replaySessions, FAIL_ON, type RecordedSession, type ReplaySessionsOptions, type ReplayReport, type ReplayChange, type RecordedCall, type FailOn } from './replay/replaySessions.js';
export type { LoggedOutcome } from '../cli/policy/replay.js';
