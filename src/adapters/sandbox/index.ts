/** The OS sandbox for commands (bubblewrap) and the shared list of protected paths. */
export { DEFAULT_DENY_READ, HOST_DENY_READ, denyReadPlan, expandHome, type DenyReadPlan } from './denyRead.js';
export { gitCheckoutFiles, gitLocations, gitPointerDirs, parseCoreWorktree, parseGitdirFile } from './gitPointers.js';
export { createSandbox, describeSandbox, SandboxUnavailableError, SANDBOX_MODES, type Sandbox, type SandboxMode, type SandboxOptions, type SandboxedCommand, type WrapOptions, type Quarantined } from './sandbox.js';
export { protectedPaths, protectedBy, userConfigDir, type ProtectedPath, type ProtectedRule, type ProtectedPathsOptions } from './protectedPaths.js';
export { commandEnv, isBaseEnvName, BASE_ENV_NAMES } from './commandEnv.js';
export { probeBwrap, type BwrapProbe } from './bwrapProbe.js';
