/**
 * Renamed: the port between the toolCall machine and the world is `CallStages`, in
 * `./callStages.ts`. This module only keeps older imports (`CallPipeline`, its types) compiling
 * until they move over; new code imports from `./callStages.js`.
 */
export type * from './callStages.js';
export type { CallStages as CallPipeline } from './callStages.js';
